// Package flagenv names candec's settings on a command line and in the
// environment, once for every command: key client_id is the flag
// --client-id and the variable CANDEC_CLIENT_ID. Value is the one flag
// type of those settings, for `candec run`'s config keys (service) and
// every other command's connection settings (internal/cmdkit/brokerflags).
//
// The libraries know none of this: a Go program that imports mqttclient
// or service's Config gets plain data, and candec's flags and variables
// only by asking for them.
//
// flagenv imports only the standard library, so that the libraries'
// neighbours (service) may use it.
package flagenv
