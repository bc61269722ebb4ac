// Package brokerflags is the command line and the environment of
// mqttclient's Settings, for every candec command that reaches a broker
// but `candec run` (whose config file, environment and flags service
// reads):
//
//	key        flag          variable          default
//	broker     --broker      CANDEC_BROKER     mqtt://127.0.0.1:1883
//	client_id  --client-id   (run's only)      the command's
//	username   --username    CANDEC_USERNAME   none
//	password   (none)        CANDEC_PASSWORD   none
//	ca_file    --ca-file     CANDEC_CA_FILE    the system's roots
//	cert_file  --cert-file   CANDEC_CERT_FILE  none
//	key_file   --key-file    CANDEC_KEY_FILE   none
//	keepalive  --keepalive   CANDEC_KEEPALIVE  30s
//
// AddFlags defines the flags and Flags.Settings reads them over the
// variables (defaults < variables < flags). The password has no flag
// since a command line is visible to every user of the machine; and
// CANDEC_CLIENT_ID, exported for the decoder, would give a watch the
// decoder's id, and the broker would hand it the decoder's session. Args
// gives a child command the flags of the settings but the password,
// which the child reads from CANDEC_PASSWORD.
//
// mqttclient describes each setting (mqttclient.Keys) and checks them
// (Settings.Validate); this package only names them (internal/base/flagenv)
// and says where each value came from.
package brokerflags
