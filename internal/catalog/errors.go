package catalog

import "errors"

// ErrServiceTypeNotFound is returned by [ServiceTypes.Get] and
// [ServiceTypes.ValidateSpec] when no service type has the id. It is wrapped
// with the id, so test for it with [errors.Is].
var ErrServiceTypeNotFound = errors.New("service type not found")
