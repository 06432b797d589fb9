package store

import "context"

// TxHook adds work to the transactions run under a context: the audit log
// uses it to write a request's record in the transaction of the change the
// request makes, without every domain passing it along.
type TxHook interface {
	// BeforeCommit runs in tx once the transaction's own work succeeded;
	// an error rolls the whole transaction back. It may run again, in a
	// new transaction, when the first is retried or another follows.
	BeforeCommit(ctx context.Context, tx *Tx) error
	// Finished says whether the transaction BeforeCommit last ran in
	// committed.
	Finished(committed bool)
}

type txHookKey struct{}

// WithTxHook returns ctx under which DB.InTx runs h around each
// transaction.
func WithTxHook(ctx context.Context, h TxHook) context.Context {
	return context.WithValue(ctx, txHookKey{}, h)
}

// WithoutTxHook returns ctx without a hook, for transactions that are not
// the change a request makes (its idempotency bookkeeping).
func WithoutTxHook(ctx context.Context) context.Context {
	if ctx.Value(txHookKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, txHookKey{}, nil)
}

// hooked wraps fn with ctx's hook, if it has one; finished reports the
// outcome to it.
func hooked(ctx context.Context, fn func(tx *Tx) error) (wrapped func(tx *Tx) error, finished func(error)) {
	h, _ := ctx.Value(txHookKey{}).(TxHook)
	if h == nil {
		return fn, func(error) {}
	}
	ran := false
	return func(tx *Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			ran = true
			return h.BeforeCommit(ctx, tx)
		}, func(err error) {
			if ran {
				h.Finished(err == nil)
			}
		}
}
