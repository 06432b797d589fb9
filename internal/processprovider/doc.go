// Package processprovider is Steward's reference service provider: it
// realises `container` orders as supervised local OS processes, like Nomad's
// raw_exec driver, and implements [provider.Provider]. `steward provider
// process` serves it over the provider SDK, and `steward server --dev` runs
// it in-process, so an order provisions something real with nothing else
// installed. It also implements [provider.Updater] and [provider.Repairer]
// and registers with the "update" and "repair" operations, so Steward
// changes an instance's spec in place and repairs its runtime. It registers
// for the service types container and process-cluster.
//
// # Spec
//
// It reads these fields of DCM's ContainerSpec (snake_case):
//
//	process.command   []string            required (unless no-op); the executable and leading arguments
//	process.args      []string            appended to command
//	process.env       [{name, value}]     added to the environment
//	restart_policy    always | on_failure | never    default on_failure
//	max_restarts      integer ≥ 0         default 5
//	members           [{id, role}]        optional; one process per member (see Members)
//
// Other fields (image, resources, network) are accepted and ignored, and
// their names are logged at debug level. A missing command or a malformed
// field is refused with a [*RequestError] (HTTP 400) naming the field, such
// as "spec.process.command" or "spec.members[1].id".
//
// # Processes
//
// Each instance gets the directory WorkDir/<instance_id>: its process's
// working directory and HOME, with stdout.log and stderr.log (appended
// across restarts). The environment is PATH (the provider's), HOME,
// STEWARD_INSTANCE_ID and the spec's env, not the provider's own environment,
// which may hold credentials. A bare command name is looked up on the
// provider's PATH. The process leads its own session, hence its own process
// group without a controlling terminal: a stop signal reaches everything it
// forked, and a terminal's Ctrl-C or hang-up, meant for the provider (or the
// `steward server --dev` hosting it), never reaches it. When the leader
// exits, what is left of its group is killed, as when a container ends.
// Stopping sends SIGTERM to the group and SIGKILL after StopGrace. Nothing
// waits on the process: the supervisor polls it every WatchInterval (100ms),
// reaping it with wait4 when it is the provider's child, so the provider
// can stop and leave it running (see Restarts of the provider).
//
// The processes run as the provider's user with no isolation: anyone who
// may order a container may run any command there. Use it for development
// and tests, or on a host dedicated to it.
//
// # Members
//
// An order that lists spec.members runs a small cluster on the host:
//
//	"members": [{"id": "server-0", "role": "server"}, {"id": "agent-0", "role": "agent"}]
//
// It lists 1 to 16 members, with unique ids of 1 to 32 lowercase letters,
// digits and inner '-', roles server or agent, and at least one server.
// Each member is a process of spec.process of its own, in the directory
// WorkDir/<instance_id>/members/<member_id> (its HOME, with its stdout.log
// and stderr.log), with STEWARD_MEMBER_ID and STEWARD_MEMBER_ROLE added to
// the environment, and supervised on its own under restart_policy and
// max_restarts. The instance is RUNNING once every member has started; a
// member that cannot start before that makes it FAILED. After that a member
// whose process ends for good leaves the instance RUNNING: it changes the
// member's health, which the runtime reports say (Get's message says it
// too). Delete stops every member; Stop leaves them running, and a
// provider started later adopts each on its own. An update with a new spec
// stops every member and starts the new spec's; it may change the member
// list, but not give members to an instance without them or take them
// away: that is a different kind of instance, so replace it instead.
//
// An instance without spec.members runs one process in WorkDir/<instance_id>
// as before, and a repair sees it as one member, "main", a server.
//
// # Runtime reports
//
// An instance with members reports its runtime through Config.Runtime to
// PUT /api/v1/projects/{project}/app-instances/{order_id}/runtime, the
// project and order id taken from the create request's metadata (without
// them, or without Config.Runtime, nothing is reported):
//
//	member health    healthy while its process runs or is being restarted;
//	                 failed when it runs none and none will be restarted
//	runtime health   healthy when every member is; degraded when some member
//	                 failed but a server is healthy; failed when no server is
//	repair_available true: a process can always be started again
//	quorum_safe      more than half the servers are healthy
//
// A report goes out when the instance becomes RUNNING (after create or
// update) and whenever a health changes, not for new messages alone.
// Reports are sent like status reports, but only the newest state is worth
// sending: a newer one replaces one still waiting or being retried.
//
// # Repair
//
// [Provider.Repair] accepts a repair operation and runs it in the
// background, one per instance at a time, through the eight steps of the
// runtime-reconcile-repair seed, reporting the whole step list through
// Config.Runtime (ReportRepair, with the operation's token) whenever a step
// changes, the newest report replacing a waiting one as for runtime reports:
//
//	precheck              the action (repair, reconcile, restart) and the
//	                      members in scope: member (the target),
//	                      control_plane (the target server, or every server),
//	                      whole_runtime (every member)
//	runtime_state_discovery  which members' processes are alive
//	member_health_check   which members in scope failed
//	service_reconcile     repair: start the failed members in scope again;
//	                      restart: stop and start every member in scope, one
//	                      after the other; reconcile: skipped, non-destructive
//	certificate_or_kubeconfig_reconcile  skipped: not applicable
//	endpoint_reconcile    write WorkDir/<instance_id>/endpoint.json (instance
//	                      id, members with pid and health, observed time)
//	post_repair_health_check  after Config.RepairSettle, when members were
//	                      restarted: the members in scope run (reconcile only
//	                      says which do not)
//	report_status         send a runtime report now
//
// A member started again gets a fresh restart count. After a failed step
// the rest are skipped ("preceding step failed"), except report_status. The
// final report says succeeded, or failed with a deterministic code (the
// RepairCode constants), and carries the runtime state. A repair never
// recreates an instance; a repaired instance without members that was
// FAILED is RUNNING again once its process runs, as after an update. A
// running operation ends, failed, when the provider stops.
//
// # Restart policy
//
// When a process ends on its own (not by Delete, an update or a repair):
//
//	always      restart after any exit
//	on_failure  restart after a non-zero exit, a signal or an unknown exit; a clean exit (status 0) is final
//	never       never restart
//
// An exit is unknown when the process was not the provider's child, so its
// status could not be read: one adopted from a provider process that died
// (see Restarts of the provider), whose exit init reaped. on_failure treats
// it as a failure, so a service is restarted rather than silently lost; a
// process that really completed is merely run once more.
//
// At most max_restarts consecutive restarts are made; the exit after that
// is final. Restarts wait RestartBackoff, doubled for each consecutive
// restart, up to RestartBackoffMax. A process that ran for RestartResetAfter
// or longer ends the streak: its exit counts as the first again, so a
// long-lived service with policy always is not given up on for rare crashes.
//
// # Update
//
// An update with a new spec restarts the instance in place: the old process
// group is stopped as by Delete (SIGTERM, SIGKILL after StopGrace), and the
// new spec's command starts under the same instance id, in the same work
// directory, its output appended to the same log files. The restart streak
// starts again from zero, and a FAILED instance runs again. Specs are
// compared as the provider reads them, so an update that changes only
// ignored fields, or spells out a default, restarts nothing. Each spec has a
// generation, and a status for the process of a replaced spec is dropped:
// after an update, RUNNING always means the new spec runs.
//
// # Status
//
//	Create                     → PROVISIONING (answer)
//	exec succeeded             → RUNNING (report; message names the pid)
//	exec failed                → FAILED (report; message says why, e.g. command not found)
//	exit, restarted            → stays RUNNING (reported: the exit, then the new pid; restart_count counts)
//	exit 0, not restarted      → COMPLETED (report; message starts "completed:")
//	other exit, not restarted  → FAILED (report; message gives the exit status or signal, then the stderr tail)
//	Update, new spec           → PROVISIONING (answer and report), then as after Create
//	Update, same spec          → unchanged (answer; nothing restarted, no report)
//	repair starts the process  → RUNNING again if FAILED (report)
//	Delete                     → DELETING (answer; not reported, Steward set it)
//	process group gone         → DELETED (report; the instance is forgotten first)
//	provider Stop              → unchanged (no report; the process runs on)
//	Restore                    → the status now, reported once (see Restarts of the provider)
//
// With spec.members, "exec" is every member's first exec, and a member's
// exit, restarted or not, leaves the instance as it is (see Members).
//
// A clean exit that the policy does not restart (status 0 under on_failure
// or never) is reported COMPLETED, with a message that starts "completed:"
// and gives the exit. The workload ran to its end and succeeded: FAILED
// would send the order to its error state for a job that did what it was
// for, and RUNNING would claim a process that is gone. COMPLETED tells
// both: nothing runs, and nothing went wrong; the order's lifecycle counts
// it as a success (Ready True, reason Completed). A non-zero exit, a
// signal or an unknown exit that is not restarted stays FAILED. One that
// should come back after exiting 0 wants policy always.
//
// A FAILED message ends with what the process last wrote to stderr, as a
// failure detail (provider.Detail: its last 5 lines since it started, on
// one line joined by " | ", at most 1 KiB): "process exited with status 1;
// gave up after 5 restarts (max_restarts 5); stderr: sleep: invalid time
// interval 'notanumber' | Try 'sleep --help' for more information." The
// messages of restarts do not carry it; stderr.log keeps everything.
//
// Every change of status or message is reported, each with ObservedTime
// from Config.Now and restart_count: how many times the current spec's
// processes have been restarted (a create, an update or a repair starts
// again from zero).
// Reports for an instance are sent in order by a goroutine of their own, so
// neither callers nor supervision wait on Steward; a failed report is retried
// with backoff (up to ReportBackoffMax) until Steward takes it, however long
// Steward is away. It is given up only when a newer report for the same
// instance is queued, when Steward refuses it for good (a 4xx other than
// 408 and 429, logged), or when Stop's ReportFlushTimeout ends (logged).
//
// # No-op mode
//
// With Config.NoOp (for benchmarks), Create validates the spec without
// requiring a command, starts nothing and reports RUNNING at once (and a
// healthy runtime, with members); Update reports PROVISIONING and RUNNING
// at once for a new spec; Delete forgets the instance and reports DELETED at
// once; Stop reports nothing; a repair skips the steps that need processes
// or files. No work directory is used.
//
// # Restarts of the provider
//
// Workloads outlive the provider. Each instance has a record,
// WorkDir/.state/<instance_id>.json (mode 0600: it holds the spec's
// environment), written atomically (a temporary file, synced, renamed over
// the old one, the directory synced) when the instance is created and at
// every change after: its spec, its order's project and id, its status and
// message, whether a delete was accepted, and per member the process (pid,
// start time in clock ticks after boot from /proc/<pid>/stat, and the boot
// id, which together name one process even after the pid is reused), when
// it started, whether it ever started or failed for good, and the restart
// counts. Processes of a replaced spec still being stopped are recorded
// too.
//
// [Provider.Stop] (and so `steward server --dev` stopping on Ctrl-C, or
// `steward provider process` on SIGTERM) leaves every process running,
// reports nothing (the service has not changed), and ends; only an
// instance being deleted has its processes stopped. A provider process
// killed with SIGKILL (or crashing) leaves the same: the processes run on,
// adopted by init, and the records are as of the last change.
//
// [Provider.Restore], which the Daemon calls before it serves, takes over
// every record in WorkDir/.state, member by member:
//
//	process still running (same pid, start time and boot)  adopted and supervised again
//	process ended while no provider ran                     the restart policy decides at once, as for
//	                                                        any exit (no backoff; the exit is known only
//	                                                        for a zombie child of this OS process)
//	no process: waiting to restart, or not started yet      started
//	failed for good                                         left failed
//	delete accepted                                         processes stopped, then DELETED reported
//
// Processes of a replaced spec that still run are stopped. Then each
// instance's status is reported once, changed or not (with members, the
// runtime too), so the order reflects what runs: RUNNING for an adopted or
// restarted process, FAILED for one the policy does not restart. An
// adopted process is not the provider's child: it is watched by polling
// /proc/<pid>/stat (Linux only; the provider runs nowhere else), and its
// exit status is unknown. A record that cannot be read is logged and left
// alone.
//
// # Limits
//
// Linux only: processes are watched and named through /proc. A record is
// written after each change, so a provider killed between a change and its
// record (milliseconds) restores the state before it: a process started in
// that window and not yet recorded is left running unsupervised, and its
// member is started once more. The provider
// process must not be restarted with a different WorkDir, or it knows none
// of the old instances and answers 404 for them, which Steward reads as
// gone. Two providers must never share a WorkDir.
package processprovider
