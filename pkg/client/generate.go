package client

// The types and the client are generated from the contract; scripts/test
// checks that client.gen.go matches api/openapi.yaml.
//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../api/openapi.yaml
