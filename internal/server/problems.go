package server

import (
	"errors"
	"net/http"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/invalid"
	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/store"
)

// problems is the one table from errors to problem+json (STYLE §5). A reason
// is API: changing one changes testdata/reasons.golden, which shows in review.
func problems() httpapi.Problems {
	return append(httpapi.BaseProblems(),
		httpapi.Mapping{Match: isInvalid, Status: http.StatusBadRequest, Reason: "INVALID_ARGUMENT", Title: "Invalid argument"},
		httpapi.Mapping{Err: store.ErrInvalidPageToken, Status: http.StatusBadRequest, Reason: "INVALID_PAGE_TOKEN", Title: "Invalid page token"},
		httpapi.Mapping{Err: store.ErrStale, Status: http.StatusPreconditionFailed, Reason: "PRECONDITION_FAILED", Title: "Precondition failed"},
		httpapi.Mapping{Err: auth.ErrUnauthenticated, Status: http.StatusUnauthorized, Reason: "UNAUTHENTICATED", Title: "Unauthenticated"},
		httpapi.Mapping{Err: operations.ErrNotFound, Status: http.StatusNotFound, Reason: "OPERATION_NOT_FOUND", Title: "Operation not found"},
		httpapi.Mapping{Err: operations.ErrAlreadyDone, Status: http.StatusConflict, Reason: "OPERATION_DONE", Title: "Operation already done"},
	)
}

func isInvalid(err error) bool {
	var e *invalid.Error
	return errors.As(err, &e)
}
