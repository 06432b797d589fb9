// Package console is Steward's web console, served at /ui/ by the server
// itself (issue 25): HTML rendered on the server with html/template from
// files embedded in the binary, hand-written CSS, no script of its own yet.
//
// The console holds no domain logic and no privilege: every page and
// action is a call to Steward's own API, in process, with the signed-in
// user's token, so authentication, authorization, validation and the audit
// log are the API's (nothing a role may not do through the API can be done
// here). The token is kept in an HttpOnly, SameSite=Strict cookie (Secure
// over TLS); every form that changes something carries a CSRF token that
// must match a cookie of its own (double submit); every page is sent with a
// Content-Security-Policy that allows no inline script or style.
package console
