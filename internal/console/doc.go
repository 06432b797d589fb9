// Package console is Steward's web console, served at /ui/ by the server
// itself (issue 25): HTML rendered on the server with html/template from
// files embedded in the binary, one hand-written stylesheet and one small
// script (live.js: live pages); every page works without it.
//
// The console holds no domain logic and no privilege: every page and
// action is a call to Steward's own API, in process, as the signed-in
// user's principal, so authorization, validation and the audit log are the
// API's (nothing a role may not do through the API can be done here).
// Signing in checks the pasted token with the API and starts a server-side
// session (Sessions: the tokens package's console_sessions); the browser's
// HttpOnly, SameSite=Strict cookie (Secure over TLS) holds only the
// session's random id, and each request resumes the session through its
// token, whose principal the in-process calls act as (httpapi.ActAs, a
// context value, never a header). Signing out deletes the session. Every
// form that changes something carries a CSRF token that must match a
// cookie of its own (double submit), renewed at sign-in; every page is
// sent with a Content-Security-Policy that allows no inline script or
// style.
package console
