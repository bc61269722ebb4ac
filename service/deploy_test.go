package service

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// deployBroker starts mosquitto with deploy/mosquitto's configuration
// and ACLs as shipped, on a free port, with a password for each user.
func deployBroker(t *testing.T, users ...string) string {
	t.Helper()
	return deployBrokerACL(t, "", users...)
}

// deployBrokerACL is deployBroker with the ACL file's text replaced by
// acl, unless it is empty: a broker configured as shipped but for a
// right left out.
func deployBrokerACL(t *testing.T, aclText string, users ...string) string {
	t.Helper()
	exe, ferr := mosquitto.Find()
	passwd, err := exec.LookPath("mosquitto_passwd")
	if ferr != nil || err != nil {
		if os.Getenv(brokertest.RequireEnv) == "1" {
			t.Fatal("mosquitto and mosquitto_passwd are needed")
		}
		t.Skip("needs mosquitto and mosquitto_passwd")
	}
	dir := t.TempDir()
	conf, err := os.ReadFile(filepath.Join("..", "deploy", "mosquitto", "candec.conf"))
	if err != nil {
		t.Fatal(err)
	}
	acl := filepath.Join("..", "deploy", "mosquitto", "acl")
	if _, err := os.Stat(acl); err != nil {
		t.Fatal(err)
	}
	if aclText != "" {
		acl = filepath.Join(dir, "acl")
		if err := os.WriteFile(acl, []byte(aclText), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pw := filepath.Join(dir, "passwd")
	for i, u := range users {
		args := []string{"-b", pw, u, u + "-secret"}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
		}
	}
	port, err := mosquitto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	absACL, _ := filepath.Abs(acl)
	text := string(conf)
	for old, repl := range map[string]string{
		"password_file /etc/mosquitto/passwd": "password_file " + pw,
		"acl_file /etc/mosquitto/acl":         "acl_file " + absACL,
		"listener 1883 127.0.0.1":             "listener " + strconv.Itoa(port) + " 127.0.0.1",
	} {
		if !strings.Contains(text, old) {
			t.Fatalf("deploy/mosquitto/candec.conf has no line %q", old)
		}
		text = strings.Replace(text, old, repl, 1)
	}
	log := filepath.Join(dir, "mosquitto.log")
	text += "log_dest file " + log + "\nlog_type all\npersistence false\n"
	if os.Geteuid() == 0 {
		text += "user root\n"
	}
	confFile := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(confFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := child.Start(exec.Command(exe, "-c", confFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(5 * time.Second)
		if t.Failed() {
			b, _ := os.ReadFile(log)
			t.Logf("mosquitto log:\n%s", b)
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mosquitto.WaitListening(ctx, addr, p.Exited()); err != nil {
		b, _ := os.ReadFile(log)
		t.Fatalf("mosquitto with deploy/mosquitto/candec.conf: %v\n%s", err, b)
	}
	return "mqtt://" + addr
}

// aclClient is a connection as one of the car's users; it records what
// it receives.
type aclClient struct {
	cm   *autopaho.ConnectionManager
	mu   sync.Mutex
	got  []string // "topic payload"
	seen chan string
}

func connectAs(t *testing.T, url, user string) (*aclClient, error) {
	t.Helper()
	s := mqttclient.Settings{Broker: url, ClientID: fmt.Sprintf("%s-%d", user, time.Now().UnixNano())}
	if user != "" {
		s.Username, s.Password = user, user+"-secret"
	}
	return connectWith(t, s)
}

// connectWith connects with s, recording what it receives, and waits
// for the connection (or its refusal).
func connectWith(t *testing.T, s mqttclient.Settings) (*aclClient, error) {
	t.Helper()
	c := &aclClient{seen: make(chan string, 64)}
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{
		Settings:       s,
		OnConnectError: at.Record,
		OnPublish: func(p *paho.Publish) {
			m := p.Topic + " " + string(p.Payload)
			c.mu.Lock()
			c.got = append(c.got, m)
			c.mu.Unlock()
			select {
			case c.seen <- m:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = cm.Disconnect(ctx)
	})
	c.cm = cm
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c, at.Await(ctx, cm, s.Broker, 10*time.Second)
}

func (c *aclClient) publish(t *testing.T, topic, payload string) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.cm.Publish(ctx, &paho.Publish{Topic: topic, Payload: []byte(payload), QoS: 1, Retain: true})
	if r != nil {
		return r.ReasonCode
	}
	if err != nil {
		t.Fatalf("publish %s: %v", topic, err)
	}
	return 0
}

func (c *aclClient) subscribe(t *testing.T, filter string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sa, err := c.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	if err != nil || len(sa.Reasons) != 1 || sa.Reasons[0] > 1 {
		t.Fatalf("subscribe %s: %v %+v", filter, err, sa)
	}
}

func (c *aclClient) wait(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-c.seen:
			if m == want {
				return
			}
		case <-deadline:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("never received %q; got %q", want, c.got)
		}
	}
}

func (c *aclClient) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// TestDeployBrokerACL: with deploy/mosquitto's configuration, a client
// that is not the decoder cannot get a message into yukart/vehicle/#
// (nor the decoder's status): subscribers see only the decoder's. Only
// the bridge writes the raw topic, and nobody connects without a
// password.
func TestDeployBrokerACL(t *testing.T) {
	url := deployBroker(t, "candec", "bridge", "dashboard", "grafana")
	if _, err := connectAs(t, url, ""); err == nil {
		t.Error("an anonymous client connected; want it refused")
	}
	sub, err := connectAs(t, url, "dashboard")
	if err != nil {
		t.Fatal(err)
	}
	sub.subscribe(t, "yukart/#")
	decoder, err := connectAs(t, url, "candec")
	if err != nil {
		t.Fatal(err)
	}
	bridge, err := connectAs(t, url, "bridge")
	if err != nil {
		t.Fatal(err)
	}
	const notAuthorized = 0x87
	for _, c := range []struct {
		who    *aclClient
		name   string
		topic  string
		denied bool
	}{
		{sub, "dashboard", "yukart/vehicle/Speed", true},
		{sub, "dashboard", "yukart/decoder/status", true},
		{sub, "dashboard", "yukart/can/raw", true},
		{bridge, "bridge", "yukart/vehicle/Speed", true},
		{bridge, "bridge", "yukart/decoder/status", true},
		{decoder, "candec", "yukart/can/raw", true},
		// Campaigns come down the uplink bridge alone (docs/campaigns.md).
		{sub, "dashboard", "yukart/policy", true},
		{bridge, "bridge", "yukart/policy", true},
		{decoder, "candec", "yukart/policy", true},
		{bridge, "bridge", "yukart/can/raw", false},
		{decoder, "candec", "yukart/vehicle/Speed", false},
		{decoder, "candec", "yukart/decoder/status", false},
	} {
		payload := "from " + c.name
		rc := c.who.publish(t, c.topic, payload)
		if c.denied && rc != notAuthorized {
			t.Errorf("%s publishing on %s: reason 0x%02x, want 0x87 (not authorized)", c.name, c.topic, rc)
		}
		if !c.denied {
			if rc >= 0x80 {
				t.Errorf("%s publishing on %s: reason 0x%02x, want it accepted", c.name, c.topic, rc)
			}
			sub.wait(t, c.topic+" "+payload)
		}
	}
	// The last accepted publish arrived after every denied one was
	// answered: none of those reached the subscriber.
	want := []string{"yukart/can/raw from bridge", "yukart/vehicle/Speed from candec", "yukart/decoder/status from candec"}
	if got := sub.received(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the subscriber got %q, want only %q", got, want)
	}
	// A reader coming later finds the decoder's retained value, not a
	// spoofed one. (Another user: the broker makes a user's name its
	// client id, and a second connection would close the first.)
	late, err := connectAs(t, url, "grafana")
	if err != nil {
		t.Fatal(err)
	}
	late.subscribe(t, "yukart/vehicle/#")
	late.wait(t, "yukart/vehicle/Speed from candec")
}
