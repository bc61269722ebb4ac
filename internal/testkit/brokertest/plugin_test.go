package brokertest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFleetConf: the global settings of a fleet.conf, with the test's
// plugin and readers; comments, the ACL file, anonymous access and the
// listener's settings left out.
func TestFleetConf(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "fleet.conf")
	text := "# comment\nper_listener_settings false\nallow_anonymous false\nacl_file /etc/x.acl\n" +
		"plugin /usr/local/lib/p.so\nplugin_opt_readers ingest\nmessage_size_limit 10\n\n" +
		"listener 8883\ncafile /etc/ca.crt\nuse_username_as_clientid true\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, row := range []struct {
		readers []string
		want    string
	}{
		{nil, "per_listener_settings false\nplugin /tmp/p.so\nplugin_opt_readers ingest\nmessage_size_limit 10\n"},
		{[]string{"ingest-a", "ingest-b"}, "per_listener_settings false\nplugin /tmp/p.so\nplugin_opt_readers ingest-a ingest-b\nmessage_size_limit 10\n"},
	} {
		if got := FleetConf(t, conf, "/tmp/p.so", row.readers); got != row.want {
			t.Errorf("readers %q: got\n%s\nwant\n%s", row.readers, got, row.want)
		}
	}
}
