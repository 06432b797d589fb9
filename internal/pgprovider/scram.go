package pgprovider

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// scramIterations is PostgreSQL's default (scram_iterations).
const scramIterations = 4096

// scramVerifier returns the SCRAM-SHA-256 verifier of password, as
// PostgreSQL stores it in pg_authid.rolpassword (RFC 5802, RFC 7677):
// ALTER ROLE … PASSWORD with it sets the password without sending it.
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return scramVerifierWith(password, salt, scramIterations)
}

func scramVerifierWith(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(storedKey[:]), b64(serverKey)), nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// derivePassword is an instance's owner password: an HMAC of the instance
// id under the provider's secret key, so it is never stored and a new
// provider process on the same key knows it. rotation moves on with each
// rotation of the credentials.
func derivePassword(key []byte, instanceID string, rotation int) string {
	h := hmac.New(sha256.New, key)
	fmt.Fprintf(h, "steward-postgres-password\x00%s\x00%d", instanceID, rotation)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
