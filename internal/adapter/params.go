package adapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// resolveParams resolves the params in order; each sees the ones before.
func (r *run) resolveParams(ctx context.Context) error {
	for _, p := range r.e.prog.params {
		v, ok, err := r.resolveParam(ctx, p)
		if err != nil {
			if errors.Is(err, errOrderGone) || isTransient(err) {
				return err
			}
			return &stepError{phase: phaseParams, step: p.name, err: err}
		}
		if !ok || v == nil {
			v, ok = p.def, p.def != nil
		}
		if !ok && p.required {
			return &stepError{phase: phaseParams, step: p.name, err: fmt.Errorf("is required, but %s has no value", r.describeSource(p))}
		}
		r.vars[p.name] = v
	}
	return nil
}

// resolveParam returns the param's value and whether the source has one.
func (r *run) resolveParam(ctx context.Context, p paramProg) (any, bool, error) {
	switch p.kind {
	case sourceEvent:
		v, ok := lookup(r.in.data, p.path)
		return v, ok, nil
	case sourceEnv:
		v, ok := r.e.deps.Env(p.ref)
		return v, ok, nil
	case sourceParam:
		v, ok := lookup(r.vars[p.ref], p.path)
		return v, ok, nil
	case sourceAPICall:
		v, err := r.call(ctx, p.call)
		return v, err == nil, err
	case sourceExpression:
		v, err := evalCEL(ctx, p.expr, r.celVars())
		return v, err == nil, err
	}
	return nil, false, fmt.Errorf("unknown source kind %d", p.kind)
}

func (r *run) describeSource(p paramProg) string {
	switch p.kind {
	case sourceEvent:
		return "event." + strings.Join(p.path, ".")
	case sourceEnv:
		return "env." + p.ref
	case sourceParam:
		return strings.Join(append([]string{p.ref}, p.path...), ".")
	case sourceAPICall:
		return "the api_call"
	}
	return "the expression"
}

// call makes an api_call and decodes its JSON answer. A 404 for the
// order's own URL is errOrderGone; no answer, 5xx and 429 are transient;
// any other non-2xx answer is a terminal error (a broken URL or a missing
// permission will not mend by itself).
func (r *run) call(ctx context.Context, c *callProg) (any, error) {
	path, err := c.url.render(r.templateData())
	if err != nil {
		return nil, fmt.Errorf("render url: %w", err)
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("url %q: want a path starting with /", path)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	status, body, err := r.e.deps.API.Do(ctx, c.method, path, nil)
	switch {
	case err != nil:
		return nil, Transient(fmt.Errorf("%s %s: %w", c.method, path, err))
	case status == http.StatusNotFound && r.in.orderPath(path):
		return nil, errOrderGone
	case status == http.StatusTooManyRequests || status >= 500:
		return nil, Transient(fmt.Errorf("%s %s: status %d: %s", c.method, path, status, snippet(body)))
	case status < 200 || status > 299:
		return nil, fmt.Errorf("%s %s: status %d: %s", c.method, path, status, snippet(body))
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, nil
	}
	var v any
	if err := decodeJSON(body, &v); err != nil {
		return nil, fmt.Errorf("%s %s: answer is not JSON: %w", c.method, path, err)
	}
	return v, nil
}
