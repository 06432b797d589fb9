package server

import (
	"errors"
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/catalog"
	"github.com/stewardhq/steward/internal/credentials"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/lifecycle"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/order"
	"github.com/stewardhq/steward/internal/placement"
	"github.com/stewardhq/steward/internal/policy"
	"github.com/stewardhq/steward/internal/repair"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tokens"
)

// problems is the one table from errors to problem+json (STYLE §5). A reason
// is API: changing one changes testdata/reasons.golden, which shows in review.
func problems() httpapi.Problems {
	return append(httpapi.BaseProblems(),
		httpapi.Mapping{Match: isInvalid, Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Err: store.ErrInvalidPageToken, Status: http.StatusBadRequest, Reason: "INVALID_PAGE_TOKEN", Title: "Invalid page token"},
		httpapi.Mapping{Err: store.ErrStale, Status: http.StatusPreconditionFailed, Reason: "PRECONDITION_FAILED", Title: "Precondition failed"},
		httpapi.Mapping{Err: auth.ErrUnauthenticated, Status: http.StatusUnauthorized, Reason: "UNAUTHENTICATED", Title: "Unauthenticated"},
		httpapi.Mapping{Err: auth.ErrPermissionDenied, Status: http.StatusForbidden, Reason: "PERMISSION_DENIED", Title: "Permission denied"},
		httpapi.Mapping{Err: httpapi.ErrTooManyAuthFailures, Status: http.StatusTooManyRequests, Reason: "TOO_MANY_AUTH_FAILURES", Title: "Too many failed authentications"},
		httpapi.Mapping{Err: tokens.ErrNotFound, Status: http.StatusNotFound, Reason: "TOKEN_NOT_FOUND", Title: "Token not found", IDParam: "token_id"},
		httpapi.Mapping{Err: operations.ErrNotFound, Status: http.StatusNotFound, Reason: "OPERATION_NOT_FOUND", Title: "Operation not found", IDParam: "operation_id"},
		httpapi.Mapping{Err: operations.ErrAlreadyDone, Status: http.StatusConflict, Reason: "OPERATION_DONE", Title: "Operation already done"},

		httpapi.Mapping{Err: repair.ErrAppInstanceNotFound, Status: http.StatusNotFound, Reason: "APP_INSTANCE_NOT_FOUND", Title: "App instance not found", IDParam: "app_instance_id"},
		httpapi.Mapping{Err: repair.ErrOperationNotFound, Status: http.StatusNotFound, Reason: "REPAIR_OPERATION_NOT_FOUND", Title: "Repair operation not found", IDParam: "repair_operation_id"},
		httpapi.Mapping{Err: repair.ErrMemberNotFound, Status: http.StatusNotFound, Reason: "MEMBER_NOT_FOUND", Title: "Runtime member not found"},
		httpapi.Mapping{Err: repair.ErrRepairInProgress, Status: http.StatusConflict, Reason: "REPAIR_IN_PROGRESS", Title: "Repair in progress"},
		httpapi.Mapping{Err: repair.ErrRestartNotSupported, Status: http.StatusConflict, Reason: "RESTART_NOT_SUPPORTED", Title: "Restart not supported"},
		httpapi.Mapping{Err: repair.ErrRepairNotSupported, Status: http.StatusConflict, Reason: "REPAIR_NOT_SUPPORTED", Title: "Repair not supported by the provider"},
		httpapi.Mapping{Err: repair.ErrAppInstanceNotReady, Status: http.StatusConflict, Reason: "APP_INSTANCE_NOT_READY", Title: "App instance not ready"},
		httpapi.Mapping{Err: repair.ErrQuorumNotProvenSafe, Status: http.StatusConflict, Reason: "QUORUM_NOT_PROVEN_SAFE", Title: "Repair not proven safe"},
		httpapi.Mapping{Err: repair.ErrRuntimeStateUnknown, Status: http.StatusConflict, Reason: "RUNTIME_STATE_UNKNOWN", Title: "Runtime state unknown"},
		httpapi.Mapping{Err: repair.ErrRepairNotAvailable, Status: http.StatusConflict, Reason: "REPAIR_NOT_AVAILABLE", Title: "No repair available"},
		httpapi.Mapping{Err: repair.ErrOperationDone, Status: http.StatusConflict, Reason: "REPAIR_OPERATION_DONE", Title: "Repair operation finished"},
		httpapi.Mapping{Err: repair.ErrReportRegression, Status: http.StatusConflict, Reason: "REPAIR_REPORT_REGRESSION", Title: "Report moves backwards"},

		httpapi.Mapping{Err: credentials.ErrNotPlaced, Status: http.StatusConflict, Reason: "ORDER_NOT_PLACED", Title: "Order not placed"},
		httpapi.Mapping{Err: credentials.ErrRotationInProgress, Status: http.StatusConflict, Reason: "ROTATION_IN_PROGRESS", Title: "Rotation in progress"},
		httpapi.Mapping{Err: credentials.ErrNotSupported, Status: http.StatusConflict, Reason: "CREDENTIALS_NOT_SUPPORTED", Title: "Credentials not supported by the provider"},

		httpapi.Mapping{Err: sprm.ErrProviderNotFound, Status: http.StatusNotFound, Reason: "PROVIDER_NOT_FOUND", Title: "Provider not found", IDParam: "provider_id"},
		httpapi.Mapping{Err: sprm.ErrProviderIDConflict, Status: http.StatusConflict, Reason: "PROVIDER_ID_CONFLICT", Title: "Provider id conflict"},
		httpapi.Mapping{Err: sprm.ErrProviderInUse, Status: http.StatusConflict, Reason: "PROVIDER_IN_USE", Title: "Provider in use"},
		httpapi.Mapping{Err: sprm.ErrProviderUnavailable, Status: http.StatusServiceUnavailable, Reason: "PROVIDER_UNAVAILABLE", Title: "Provider unavailable"},
		httpapi.Mapping{Match: isSpecRefused, Status: http.StatusBadRequest, Reason: "SPEC_REFUSED_BY_PROVIDER", Title: "The provider refuses the spec"},
		httpapi.Mapping{Match: isProviderError, Status: http.StatusBadGateway, Reason: "PROVIDER_ERROR", Title: "Provider refused the request"},
		httpapi.Mapping{Err: sprm.ErrProviderTimeout, Status: http.StatusGatewayTimeout, Reason: "PROVIDER_TIMEOUT", Title: "Provider timed out"},
		httpapi.Mapping{Err: sprm.ErrProviderUnreachable, Status: http.StatusBadGateway, Reason: "PROVIDER_UNREACHABLE", Title: "Provider unreachable"},
		httpapi.Mapping{Err: sprm.ErrRecordFailed, Status: http.StatusInternalServerError, Reason: "INSTANCE_RECORD_FAILED", Title: "Instance created but not recorded"},
		httpapi.Mapping{Err: sprm.ErrInstanceNotFound, Status: http.StatusNotFound, Reason: "INSTANCE_NOT_FOUND", Title: "Instance not found", IDParam: "instance_id"},
		httpapi.Mapping{Err: sprm.ErrInstanceExists, Status: http.StatusConflict, Reason: "ALREADY_EXISTS", Title: "Already exists"},
		httpapi.Mapping{Err: sprm.ErrCleanupTaskNotFound, Status: http.StatusNotFound, Reason: "CLEANUP_TASK_NOT_FOUND", Title: "Cleanup task not found", IDParam: "cleanup_task_id"},
		httpapi.Mapping{Err: sprm.ErrCleanupTaskNotFailed, Status: http.StatusConflict, Reason: "CLEANUP_TASK_NOT_FAILED", Title: "Cleanup task not failed"},

		httpapi.Mapping{Err: catalog.ErrServiceTypeNotFound, Status: http.StatusNotFound, Reason: "SERVICE_TYPE_NOT_FOUND", Title: "Service type not found", IDParam: "service_type_id"},
		httpapi.Mapping{Err: catalog.ErrServiceTypeExists, Status: http.StatusConflict, Reason: "SERVICE_TYPE_EXISTS", Title: "Service type exists"},
		httpapi.Mapping{Err: catalog.ErrServiceTypeReadOnly, Status: http.StatusConflict, Reason: "SERVICE_TYPE_READ_ONLY", Title: "Service type is read-only"},
		httpapi.Mapping{Err: catalog.ErrServiceTypeInUse, Status: http.StatusConflict, Reason: "SERVICE_TYPE_IN_USE", Title: "Service type in use"},
		httpapi.Mapping{Err: catalog.ErrCatalogItemNotFound, Status: http.StatusNotFound, Reason: "CATALOG_ITEM_NOT_FOUND", Title: "Catalog item not found", IDParam: "catalog_item_id"},
		httpapi.Mapping{Err: catalog.ErrCatalogItemExists, Status: http.StatusConflict, Reason: "CATALOG_ITEM_EXISTS", Title: "Catalog item exists"},
		httpapi.Mapping{Err: catalog.ErrCatalogItemInUse, Status: http.StatusConflict, Reason: "CATALOG_ITEM_IN_USE", Title: "Catalog item in use"},
		httpapi.Mapping{Err: order.ErrNotFound, Status: http.StatusNotFound, Reason: "ORDER_NOT_FOUND", Title: "Order not found", IDParam: "catalog_item_instance_id"},
		httpapi.Mapping{Err: lifecycle.ErrOrderExists, Status: http.StatusConflict, Reason: "ORDER_EXISTS", Title: "Order exists"},
		httpapi.Mapping{Err: lifecycle.ErrAttributeNotUpdatable, Status: http.StatusBadRequest, Reason: "ATTRIBUTE_NOT_UPDATABLE", Title: "Attribute not updatable"},
		httpapi.Mapping{Err: lifecycle.ErrInvalidState, Status: http.StatusConflict, Reason: "INVALID_STATE", Title: "Invalid state"},
		httpapi.Mapping{Err: lifecycle.ErrOrderDeleting, Status: http.StatusConflict, Reason: "DELETING", Title: "Order is being deleted"},
		httpapi.Mapping{Err: lifecycle.ErrParentDeleting, Status: http.StatusConflict, Reason: "PARENT_DELETING", Title: "Parent order is being deleted"},
		httpapi.Mapping{Err: lifecycle.ErrChildrenExist, Status: http.StatusConflict, Reason: "CHILDREN_EXIST", Title: "Children restrict the deletion"},
		httpapi.Mapping{Err: lifecycle.ErrOrderNotDeleting, Status: http.StatusConflict, Reason: "NOT_DELETING", Title: "Order is not being deleted"},
		httpapi.Mapping{Err: lifecycle.ErrVersionMismatch, Status: http.StatusConflict, Reason: "VERSION_MISMATCH", Title: "Version mismatch"},
		httpapi.Mapping{Err: lifecycle.ErrNoTransfer, Status: http.StatusConflict, Reason: "INVALID_TRANSFER", Title: "No such transfer"},
		httpapi.Mapping{Err: lifecycle.ErrTransferNotApplicable, Status: http.StatusConflict, Reason: "TRANSFER_NOT_APPLICABLE", Title: "Transfer cannot apply"},

		httpapi.Mapping{Err: placement.ErrResourceNotFound, Status: http.StatusNotFound, Reason: "RESOURCE_NOT_FOUND", Title: "Resource not found", IDParam: "instance_id"},
		httpapi.Mapping{Err: placement.ErrResourceExists, Status: http.StatusConflict, Reason: "RESOURCE_EXISTS", Title: "Resource exists"},
		httpapi.Mapping{Err: placement.ErrRehydrationInProgress, Status: http.StatusConflict, Reason: "REHYDRATION_IN_PROGRESS", Title: "Rehydration in progress"},
		httpapi.Mapping{Err: placement.ErrOrderGone, Status: http.StatusConflict, Reason: "ORDER_GONE", Title: "Order gone"},
		httpapi.Mapping{Err: placement.ErrCopyFailed, Status: http.StatusBadGateway, Reason: "DATA_COPY_FAILED", Title: "Data copy failed"},
		httpapi.Mapping{Err: placement.ErrNewInstanceFailed, Status: http.StatusBadGateway, Reason: "NEW_INSTANCE_FAILED", Title: "New instance failed"},

		httpapi.Mapping{Err: policy.ErrPolicyNotFound, Status: http.StatusNotFound, Reason: "POLICY_NOT_FOUND", Title: "Policy not found", IDParam: "policy_id"},
		httpapi.Mapping{Err: policy.ErrPolicyExists, Status: http.StatusConflict, Reason: "POLICY_ALREADY_EXISTS", Title: "Policy already exists"},
		httpapi.Mapping{Err: policy.ErrInvalidPolicy, Status: http.StatusBadRequest, Reason: "INVALID_POLICY", Title: "Invalid policy"},
		httpapi.Mapping{Err: policy.ErrRejected, Status: http.StatusNotAcceptable, Reason: "POLICY_REJECTED", Title: "Rejected by policy"},
		httpapi.Mapping{Err: placement.ErrPolicyBrokeSpec, Status: http.StatusConflict, Reason: "POLICY_CONFLICT", Title: "Policy conflict"},
		httpapi.Mapping{Err: policy.ErrConflict, Status: http.StatusConflict, Reason: "POLICY_CONFLICT", Title: "Policy conflict"},
		httpapi.Mapping{Err: policy.ErrEvaluation, Status: http.StatusInternalServerError, Reason: "POLICY_EVALUATION_FAILED", Title: "Policy evaluation failed"},
		httpapi.Mapping{Err: policy.ErrNoProvider, Status: http.StatusServiceUnavailable, Reason: "NO_PROVIDER_AVAILABLE", Title: "No provider available"},

		httpapi.Mapping{Err: lifecycle.ErrLifecycleNotFound, Status: http.StatusNotFound, Reason: "LIFECYCLE_NOT_FOUND", Title: "Lifecycle not found", IDParam: "lifecycle_id"},
		httpapi.Mapping{Err: lifecycle.ErrLifecycleExists, Status: http.StatusConflict, Reason: "LIFECYCLE_EXISTS", Title: "Lifecycle exists"},
		httpapi.Mapping{Err: lifecycle.ErrLifecycleReadOnly, Status: http.StatusConflict, Reason: "LIFECYCLE_READ_ONLY", Title: "Lifecycle is read-only"},
		httpapi.Mapping{Err: lifecycle.ErrLifecycleInUse, Status: http.StatusConflict, Reason: "LIFECYCLE_IN_USE", Title: "Lifecycle in use"},
	)
}

func isSpecRefused(err error) bool {
	var e *sprm.SpecRefusedError
	return errors.As(err, &e)
}

func isProviderError(err error) bool {
	var e *sprm.ProviderError
	return errors.As(err, &e)
}

// isInvalid matches invalid input, a member fixed at create given another
// value too: the contract answers both INVALID_ARGUMENT naming the member
// (AIP-203's IMMUTABLE is the kind, not the reason).
func isInvalid(err error) bool {
	var e *invalid.Error
	var imm *invalid.ImmutableError
	return errors.As(err, &e) || errors.As(err, &imm)
}
