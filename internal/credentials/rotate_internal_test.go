package credentials

import (
	"context"
	"testing"

	"github.com/stewardhq/steward/internal/operations"
	"github.com/stewardhq/steward/internal/sprm"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/pkg/provider"
)

// doneOperations knows one operation, done or not.
type doneOperations struct{ done bool }

func (o doneOperations) StartTx(context.Context, *store.Tx, operations.StartParams) (operations.Operation, error) {
	panic("not used")
}

func (o doneOperations) FinishTx(context.Context, *store.Tx, string, operations.FinishParams) (operations.Operation, error) {
	panic("not used")
}

func (o doneOperations) ByRequestKey(context.Context, string, string) (operations.Operation, error) {
	panic("not used")
}

func (o doneOperations) Get(_ context.Context, _, id string) (operations.Operation, error) {
	return operations.Operation{ID: id, Done: o.done}, nil
}

// countingCalls counts the rotations asked of the provider.
type countingCalls struct{ rotations int }

func (c *countingCalls) Credentials(context.Context, string, string) (provider.Credentials, error) {
	return provider.Credentials{}, nil
}

func (c *countingCalls) RotateCredentials(context.Context, string, provider.RotateRequest) (provider.Rotated, error) {
	c.rotations++
	return provider.Rotated{}, nil
}

type oneProvider struct{}

func (oneProvider) Provider(context.Context, string) (sprm.Provider, error) {
	return sprm.Provider{Name: "p", Endpoint: "http://127.0.0.1:1", Operations: []string{provider.OperationCredentials}}, nil
}

// A rotation job attempt whose operation is already done (a duplicate
// attempt after a takeover, or a late one) does not reach the provider: a
// newer rotation may have run since, and the provider would rotate again.
func TestRotate_AnAttemptAfterItsOperationIsDoneDoesNotReachTheProvider(t *testing.T) {
	calls := &countingCalls{}
	s := New(Config{Operations: doneOperations{done: true}, Providers: oneProvider{}, Client: calls})
	if err := s.rotate(t.Context(), rotateArgs{OperationID: "op-1", Project: "default", InstanceID: "i-1", ProviderName: "p"}, false); err != nil {
		t.Fatal(err)
	}
	if calls.rotations != 0 {
		t.Errorf("the provider was asked %d times for a done operation, want 0", calls.rotations)
	}
}
