package provider

import (
	"context"
	"time"
)

// OperationCredentials is the entry of [Registration.Operations] that says a
// provider hands out its instances' credentials and rotates them (it
// implements [Credentialer]).
const OperationCredentials = "credentials"

// Credentials are the secret values an instance's users reach it with
// (GET {endpoint}/api/v1/services/{instance_id}/credentials). The provider
// keeps them; Steward asks for them on each read by an order's user and
// stores them nowhere. Every member but InstanceID is optional.
type Credentials struct {
	InstanceID string `json:"instance_id"`
	Username   string `json:"username,omitempty"`
	Password   string `json:"password,omitempty"`
	// URL is a connection URL with the secret in it
	// (postgres://user:password@host:5432/db?sslmode=disable).
	URL string `json:"url,omitempty"`
	// Env are the same values as environment variables (PGHOST,
	// PGPASSWORD, DATABASE_URL, ...), for `steward credentials -o env`.
	Env map[string]string `json:"env,omitempty"`
}

// RotateRequest asks for new credentials: POST
// {endpoint}/api/v1/services/{instance_id}/credentials:rotate, with the
// Idempotency-Key header set to OperationID.
type RotateRequest struct {
	// InstanceID is the provider's instance; it travels in the path.
	InstanceID  string `json:"-"`
	OperationID string `json:"operation_id"`
}

// Rotated is a provider's answer to a [RotateRequest]. It carries no secret:
// the new credentials are read as any others.
type Rotated struct {
	InstanceID  string    `json:"instance_id"`
	OperationID string    `json:"operation_id"`
	RotateTime  time.Time `json:"rotate_time"`
}

// Credentialer is implemented by a [Provider] whose instances have
// credentials; it registers with [OperationCredentials]. [NewServer] serves
// its routes only to a caller that presents the server's token, and not at
// all on a server without one, loopback or not: a secret goes to Steward
// alone.
//
// Credentials of an instance it does not hold return [ErrNotFound].
// RotateCredentials replaces them: once it returns, the old ones no longer
// work. It must be idempotent by OperationID: a repeated request of the
// rotation it did last changes nothing and answers as it did.
type Credentialer interface {
	Credentials(ctx context.Context, instanceID string) (Credentials, error)
	RotateCredentials(ctx context.Context, req RotateRequest) (Rotated, error)
}
