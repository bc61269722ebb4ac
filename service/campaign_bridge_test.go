package service

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/fleet/rollout"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// campaignsUser is rollout's configuration as the user campaigns of
// fleet.acl, with its certificate of the test CA.
func (u *uplink) campaignsUser(t *testing.T) rollout.Config {
	t.Helper()
	cert, key := u.ca.Client(t, "campaigns", "campaigns")
	return rollout.Config{Settings: mqttclient.Settings{Broker: u.cloud.URL, ClientID: "campaigns", CAFile: u.ca.File,
		CertFile: cert, KeyFile: key}}
}

// waitCar reads the cloud's retained campaign state until vehicle's
// acknowledgement satisfies ok.
func waitCar(t *testing.T, cfg rollout.Config, vehicle, what string, ok func(*campaign.Ack) bool) *campaign.Ack {
	t.Helper()
	var got *campaign.Ack
	waitUntil(t, what, func() bool {
		cars, err := rollout.Read(context.Background(), cfg, vehicle)
		if err != nil {
			t.Fatal(err)
		}
		if len(cars) == 1 && cars[0].Ack != nil && ok(cars[0].Ack) {
			got = cars[0].Ack
			return true
		}
		time.Sleep(50 * time.Millisecond)
		return false
	})
	return got
}

// TestCampaignThroughBridge runs campaigns the way a fleet does, with
// deploy/mosquitto as shipped: the cloud broker with fleet.conf,
// fleet.acl and the plugin, the car's broker with bridge.conf, candec
// on the car. The car's acknowledgement reaches the cloud; a campaign
// the user campaigns pushes without the signing key is refused; a
// campaign pushed while the car's broker is down is applied once it is
// back.
func TestCampaignThroughBridge(t *testing.T) {
	brokertest.RequireMosquitto(t) // the embedded broker has no bridges
	u := &uplink{dir: t.TempDir()}
	u.ca = brokertest.NewCA(t, u.dir)
	u.startCloud(t)
	u.startCar(t)
	k := newCampKit(t)
	cfg := testConfig(t, u.car.URL)
	cfg.DBC = []string{k.dbcFile}
	cfg.Campaign = CampaignConfig{Vehicle: "kart01", Topic: "yukart/policy", Key: k.pubFile,
		State: filepath.Join(k.dir, "kart01.state"), AckTopic: DefaultCampaignAckTopic}
	startService(t, cfg, loadTestDB(t))
	cloud := u.campaignsUser(t)
	waitCar(t, cloud, "kart01", "the car's first acknowledgement in the cloud", func(a *campaign.Ack) bool { return a.Applied.Version == 0 })

	// Write access to the policy topic is not the right to change a
	// car's policy: that is the key's.
	stranger := newCampKit(t)
	stranger.dbcHash = k.dbcHash
	if _, err := rollout.Push(context.Background(), cloud, stranger.sign(t, 9, "*", nil), nil); err != nil {
		t.Fatal(err)
	}
	a := waitCar(t, cloud, "kart01", "the stranger's campaign refused", func(a *campaign.Ack) bool { return a.Last != nil })
	if a.Last.Reason != campaign.ReasonKey || a.Applied.Version != 0 {
		t.Fatalf("the stranger's campaign: %+v %+v; want refused for its key, nothing applied", a.Applied, a.Last)
	}

	// The car's broker goes down (the car is off); the campaign is
	// pushed meanwhile, and applied once the car is back.
	carOpts := u.carOptions(t)
	if err := u.car.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	pushed, err := rollout.Push(context.Background(), cloud, k.sign(t, 3, "kart0*", nil), nil)
	if err != nil || len(pushed) != 1 || pushed[0].Vehicle != "kart01" {
		t.Fatalf("push: %v %v", pushed, err)
	}
	u.car = brokertest.StartMosquitto(t, carOpts)
	a = waitCar(t, cloud, "kart01", "version 3 applied after the car came back", func(a *campaign.Ack) bool { return a.Applied.Version == 3 })
	if a.Last == nil || a.Last.Result != campaign.ResultApplied || a.Applied.Hash != campaign.PolicyHash([]byte(campaignPolicy)) {
		t.Errorf("acknowledged %+v %+v; want version 3 applied", a.Applied, a.Last)
	}
}

// carOptions are the car broker's options as startCar made them, on its
// port, to start it again.
func (u *uplink) carOptions(t *testing.T) mosquitto.Options {
	t.Helper()
	return mosquitto.Options{Dir: filepath.Join(u.dir, "car"), Verbose: true, Persistence: true, Extra: u.bridgeConf(t), Port: portOf(t, u.car.Addr)}
}

// TestCampaignFleetACL: on the cloud broker as shipped (fleet.conf,
// fleet.acl, the plugin), a car cannot write a policy topic, its own or
// another's, and may subscribe to its own alone; the user campaigns
// writes every car's and reads the acknowledgements, never a shared
// group.
func TestCampaignFleetACL(t *testing.T) {
	brokertest.RequireMosquitto(t) // the embedded broker has no client certificates
	u := &uplink{dir: t.TempDir()}
	u.ca = brokertest.NewCA(t, u.dir)
	u.startCloud(t)
	campaigns := connectCert(t, u.cloud.URL, u.ca, "campaigns")
	campaigns.subscribe(t, "fleet/+/yukart/policy")
	kart01 := connectCert(t, u.cloud.URL, u.ca, "kart01")
	kart01.subscribe(t, "fleet/kart01/yukart/policy")
	for _, topic := range []string{"fleet/kart01/yukart/policy", "fleet/kart02/yukart/policy"} {
		if rc := kart01.publish(t, topic, "spoof"); rc != 0x87 {
			t.Errorf("kart01 publishing on %s: reason %#x, want 0x87 (not authorized)", topic, rc)
		}
	}
	for _, filter := range []string{"fleet/kart02/yukart/policy", "fleet/+/yukart/policy", "fleet/kart01/yukart/#", "$share/g/fleet/kart01/yukart/policy"} {
		if rc := subscribeCode(t, kart01, filter); rc < 0x80 {
			t.Errorf("kart01 subscribing to %s: reason %#x, want a refusal", filter, rc)
		}
	}
	if rc := subscribeCode(t, campaigns, "$share/ingest/fleet/+/yukart/window"); rc < 0x80 {
		t.Errorf("campaigns subscribing to the ingest's group: reason %#x, want a refusal", rc)
	}
	if rc := kart01.publish(t, "fleet/kart01/yukart/decoder/campaign", `{"vehicle":"kart01","applied":{"version":0}}`); rc >= 0x80 {
		t.Errorf("kart01 acknowledging: reason %#x, want success", rc)
	}
	if rc := campaigns.publish(t, "fleet/kart01/yukart/policy", "pushed"); rc != 0 {
		t.Fatalf("campaigns pushing: reason %#x, want 0", rc)
	}
	kart01.wait(t, "fleet/kart01/yukart/policy pushed")
	campaigns.wait(t, "fleet/kart01/yukart/policy pushed")
	for _, m := range append(campaigns.received(), kart01.received()...) {
		if m == "fleet/kart01/yukart/policy spoof" || m == "fleet/kart02/yukart/policy spoof" {
			t.Errorf("received %q", m)
		}
	}
}

// subscribeCode returns the SUBACK's reason code for filter.
func subscribeCode(t *testing.T, c *aclClient, filter string) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sa, err := c.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	if sa != nil && len(sa.Reasons) == 1 {
		return sa.Reasons[0]
	}
	t.Fatalf("subscribe %s: %v %+v", filter, err, sa)
	return 0
}
