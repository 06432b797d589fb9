// Package provider is the service provider SDK and the provider wire
// contract of Steward (DESIGN §6, API.md "Provider-side contract").
//
// A service provider realises Steward's resources (VMs, containers,
// databases, clusters) on some infrastructure. To write one:
//
//   - implement [Provider] (create, get, delete and health, each idempotent),
//     and [Updater] too if it can change an instance in place; register it
//     then with [OperationUpdate], else Steward updates by replacement;
//   - serve it with [NewServer], which speaks the wire contract: routes,
//     JSON, the 1 MiB body limit, bearer authentication and errors as
//     application/problem+json;
//   - register it with Steward with a [Registrar], which retries with
//     backoff until Steward accepts it;
//   - report status changes (RUNNING, COMPLETED, FAILED, DELETED, and every
//     change of a running instance: a restart with its new message and
//     [StatusReport.RestartCount]) with a [StatusReporter]: [HTTPReporter]
//     PUTs them to Steward, [NATSReporter] publishes them as CloudEvents on
//     steward.status.<service_type>. Put a [ReportQueue] in front of either
//     so that no report is lost while Steward is away: it keeps the latest
//     report of each instance until one is delivered.
//
// Optional interfaces add operations a provider registers by name:
// [Repairer] (repair), [Credentialer] (credentials: secrets handed to
// Steward alone), [Validator] (validate: a spec checked before an order is
// acknowledged) and [Exporter] (export: a rehydration carries the data;
// the new provider reads the old one's export with [OpenExport]).
//
// [Registrar] and [HTTPReporter] take several Steward URLs (its replicas,
// StewardURLs) and move on to the next when one cannot be reached.
//
// [Registrar] and [HTTPReporter] call Steward's own API through its typed
// Go client, package github.com/stewardhq/steward/pkg/client (generated
// from api/openapi.yaml), with this package's transport: no redirects
// followed, a timeout per call, answers read up to 1 MiB.
//
// Steward itself calls providers through [Client], which speaks the wire
// contract above (a provider's API, not Steward's) on that transport
// directly. The errors of all three tell a refusal ([*ResponseError]) from a
// call whose outcome is unknown ([ErrTimeout], [ErrUnreachable]).
//
// # Failure model
//
// Steward may call Create or Delete again for the same instance whenever it
// did not see an answer: the network may drop the answer after the provider
// acted. That is why every [Provider] method must be idempotent by instance
// id, and why Create answers quickly and reports the final status later.
//
// Package providertest runs a real in-process provider for tests.
//
// This package is public and follows semantic versioning. It depends only on
// the standard library, github.com/google/uuid and package
// github.com/stewardhq/steward/pkg/client (with its oapi-codegen runtime).
package provider
