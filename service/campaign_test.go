package service

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/fleet/rollout"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/rawbatch"
)

// campaignPolicy is the policy the tests' campaigns push: a faster cap
// than testPolicy's.
const campaignPolicy = `defaults:
  max_rate: 50
  stale_after: 300ms
rules:
  - match: Gear
    max_rate: 0
    on_change: true
`

// campKit is a fleet's campaign material: the signing key, the cars'
// public key file and DBC file.
type campKit struct {
	dir     string
	key     ed25519.PrivateKey
	pubFile string
	dbcFile string
	dbcHash string
}

func newCampKit(t *testing.T) *campKit {
	t.Helper()
	k := &campKit{dir: t.TempDir()}
	priv, pub, err := campaign.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if k.key, err = campaign.ParsePrivateKey(priv); err != nil {
		t.Fatal(err)
	}
	k.pubFile = filepath.Join(k.dir, "campaign.pub")
	k.dbcFile = filepath.Join(k.dir, "test.dbc")
	for name, b := range map[string][]byte{k.pubFile: pub, k.dbcFile: []byte(testDBC)} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := dbc.BusFiles{All: []string{k.dbcFile}}
	if k.dbcHash, err = files.Hash(context.Background()); err != nil {
		t.Fatal(err)
	}
	return k
}

// sign signs a campaign of version for glob with the kit's key, after
// mod changes its body.
func (k *campKit) sign(t *testing.T, version uint64, glob string, mod func(*campaign.Body)) []byte {
	t.Helper()
	b := campaign.Body{Version: version, Vehicles: glob, DBC: k.dbcHash, NotBefore: time.Now().Add(-time.Minute), Policy: campaignPolicy}
	if mod != nil {
		mod(&b)
	}
	out, err := campaign.Sign(k.key, b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// carConfig is the config of vehicle's candec on the broker at url,
// with campaigns on, its topics as the fleet's broker names them
// (fleet/<vehicle>/…), its raw frames on cars/<vehicle>/raw.
func (k *campKit) carConfig(t *testing.T, url, vehicle string) Config {
	t.Helper()
	c := testConfig(t, url)
	c.ClientID = "candec-" + vehicle
	c.DBC = []string{k.dbcFile}
	c.RawTopic = "cars/" + vehicle + "/raw"
	c.TopicTemplate = "cars/" + vehicle + "/vehicle/{signal}"
	c.StatusTopic = "fleet/" + vehicle + "/yukart/decoder/status"
	c.WindowTopic = "fleet/" + vehicle + "/yukart/window"
	c.Campaign = CampaignConfig{Vehicle: vehicle, Topic: "fleet/" + vehicle + "/yukart/policy", Key: k.pubFile,
		State: filepath.Join(k.dir, vehicle+".state"), AckTopic: "fleet/" + vehicle + "/yukart/decoder/campaign"}
	return c
}

// feeder publishes a motor and a state frame to each raw topic every
// 10 ms of wall and frame time, the speed changing at each, until the
// test ends.
func feeder(t *testing.T, url string, topics ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: mqttclient.Settings{Broker: url, ClientID: "feeder-" + t.Name()}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		ts := time.Now().UnixNano()
		for seq := uint64(1); ; seq += 2 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ts += int64(10 * time.Millisecond)
			b, _ := rawbatch.AppendBatch(nil, seq, []frame.Frame{motorFrame(ts, uint16(seq%5000), 0), stateFrame(ts, byte(seq/100%4))})
			for _, topic := range topics {
				_, _ = cm.Publish(ctx, &paho.Publish{Topic: topic, Payload: b})
			}
		}
	}()
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
		cancel()
		<-done
	})
}

// latestAcks returns each car's latest acknowledgement that c received.
func latestAcks(t *testing.T, msgs []brokertest.Message) map[string]campaign.Ack {
	t.Helper()
	out := map[string]campaign.Ack{}
	for topic, m := range brokertest.Latest(msgs) {
		id, ok := campaign.VehicleOf(rollout.DefaultAckTopic, topic)
		if !ok {
			continue
		}
		a, err := campaign.ParseAck(m.Payload)
		if err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		out[id] = a
	}
	return out
}

// windowCheck reads a car's window stream as a subscriber: it returns
// the policy versions in the order the windows carried them (each once
// per run of windows), the window seq gaps and the envelopes lost.
func windowCheck(t *testing.T, msgs []brokertest.Message, topic string) (versions []uint64, windowGaps, lost uint64, windows int) {
	t.Helper()
	var w envelope.Window
	tr := envelope.NewTracker()
	var last uint64
	for _, m := range msgs {
		if m.Topic != topic {
			continue
		}
		if err := envelope.ParseWindow(m.Payload, &w); err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		windows++
		if last != 0 && w.Seq != last+1 {
			windowGaps += w.Seq - last - 1
		}
		last = w.Seq
		if len(versions) == 0 || versions[len(versions)-1] != w.Policy {
			versions = append(versions, w.Policy)
		}
		for i := range w.Items {
			lost += tr.ObserveBytes(w.Items[i].Topic, &w.Items[i].Envelope).Lost
		}
	}
	return versions, windowGaps, lost, windows
}

// TestCampaignThreeOfFive: a campaign for kart0[1-3] pushed to a fleet
// of five: those three apply it, each window stream going from version
// 0 to the campaign's with no window and no envelope lost, and
// acknowledge it; the other two never change; status shows exactly
// that.
func TestCampaignThreeOfFive(t *testing.T) {
	b := brokertest.StartMosquitto(t, mosquitto.Options{})
	k := newCampKit(t)
	db := loadTestDB(t)
	cars := []string{"kart01", "kart02", "kart03", "kart04", "kart05"}
	obs := brokertest.Connect(t, b.URL)
	obs.Subscribe("fleet/+/yukart/window", rollout.DefaultAckTopic)
	var raws []string
	for _, id := range cars {
		startService(t, k.carConfig(t, b.URL, id), db)
		raws = append(raws, "cars/"+id+"/raw")
	}
	obs.WaitFor("every car's first acknowledgement", func(m []brokertest.Message) bool { return len(latestAcks(t, m)) == len(cars) })
	feeder(t, b.URL, raws...)
	obs.WaitFor("windows of every car", func(m []brokertest.Message) bool {
		for _, id := range cars {
			if _, _, _, n := windowCheck(t, m, "fleet/"+id+"/yukart/window"); n < 20 {
				return false
			}
		}
		return true
	})

	cfg := rollout.Config{Settings: mqttclient.Settings{Broker: b.URL, ClientID: "campaigns"}}
	pushed, err := rollout.Push(context.Background(), cfg, k.sign(t, 7, "kart0[1-3]", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pushed); got != "[{kart01 fleet/kart01/yukart/policy} {kart02 fleet/kart02/yukart/policy} {kart03 fleet/kart03/yukart/policy}]" {
		t.Fatalf("pushed to %s", got)
	}
	obs.WaitFor("three cars applying version 7", func(m []brokertest.Message) bool {
		n := 0
		for _, a := range latestAcks(t, m) {
			if a.Applied.Version == 7 {
				n++
			}
		}
		return n == 3
	})
	// Windows of the new version from each of the three.
	obs.WaitFor("windows of version 7", func(m []brokertest.Message) bool {
		for _, id := range cars[:3] {
			if v, _, _, _ := windowCheck(t, m, "fleet/"+id+"/yukart/window"); len(v) < 2 {
				return false
			}
		}
		return true
	})
	msgs := obs.Messages()
	for i, id := range cars {
		versions, gaps, lost, n := windowCheck(t, msgs, "fleet/"+id+"/yukart/window")
		want := "[0]"
		if i < 3 {
			want = "[0 7]"
		}
		if fmt.Sprint(versions) != want || gaps != 0 || lost != 0 {
			t.Errorf("%s: %d windows of policy versions %v, %d window seqs and %d envelopes lost; want versions %s, none lost",
				id, n, versions, gaps, lost, want)
		}
	}
	got, err := rollout.Read(context.Background(), cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := rollout.WriteStatus(&sb, got); err != nil {
		t.Fatal(err)
	}
	hash := campaign.PolicyHash([]byte(campaignPolicy))
	for i, c := range got {
		a := c.Ack
		switch {
		case a == nil || c.Vehicle != cars[i]:
			t.Fatalf("status: %+v", got)
		case i < 3 && (c.Pushed == nil || c.Pushed.Version != 7 || a.Applied.Version != 7 || a.Applied.Hash != hash ||
			a.Last == nil || a.Last.Result != campaign.ResultApplied):
			t.Errorf("%s: pushed %v, acknowledged %+v %+v; want version 7 pushed and applied", c.Vehicle, c.Pushed, a.Applied, a.Last)
		case i >= 3 && (c.Pushed != nil || a.Applied.Version != 0 || a.Last != nil):
			t.Errorf("%s: pushed %v, acknowledged %+v; want nothing pushed, nothing applied", c.Vehicle, c.Pushed, a)
		}
	}
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	row := func(i int) string {
		f := strings.Fields(lines[i])
		if len(f) > 4 && strings.HasSuffix(f[4], "Z") {
			f[4] = "TIME"
		}
		return strings.Join(f, " ")
	}
	if len(lines) != 6 || row(1) != "kart01 7 7 "+hash[7:19]+" TIME applied version 7" ||
		row(3) != "kart03 7 7 "+hash[7:19]+" TIME applied version 7" || row(4) != "kart04 - 0 (policy file) - -" {
		t.Errorf("status:\n%s", sb.String())
	}
}

// TestCampaignRefused: every campaign a car must not apply is refused,
// with its reason acknowledged, and nothing is applied: the version it
// runs stays, also after the car restarts.
func TestCampaignRefused(t *testing.T) {
	b := brokertest.StartMosquitto(t, mosquitto.Options{})
	k := newCampKit(t)
	other := newCampKit(t)
	other.dbcHash = k.dbcHash
	db := loadTestDB(t)
	cfg := k.carConfig(t, b.URL, "kart01")
	obs := brokertest.Connect(t, b.URL)
	obs.Subscribe(cfg.Campaign.AckTopic)
	car := startService(t, cfg, db)
	acks := func() []campaign.Ack {
		var out []campaign.Ack
		for _, m := range obs.Messages() {
			a, err := campaign.ParseAck(m.Payload)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
		return out
	}
	obs.WaitFor("the first acknowledgement", func(m []brokertest.Message) bool { return len(m) > 0 })

	good := k.sign(t, 5, "kart0*", nil)
	var f struct{ Campaign, Key, Sig string }
	if err := json.Unmarshal(good, &f); err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(f.Sig)
	if err != nil {
		t.Fatal(err)
	}
	sig[10] ^= 1 // another signature of the right length
	f.Sig = base64.StdEncoding.EncodeToString(sig)
	badSig, _ := json.Marshal(f)
	oversized := append([]byte(`{"pad":"`), make([]byte, campaign.MaxSize)...)
	for i := 8; i < len(oversized); i++ {
		oversized[i] = 'x'
	}
	oversized = append(oversized, `"}`...)
	rows := []struct {
		name    string
		payload []byte
		version uint64 // of the acknowledgement's last outcome
		reason  campaign.Reason
		applied uint64 // the version the car runs after it
	}{
		{"not a campaign", []byte("hello"), 0, campaign.ReasonFormat, 0},
		{"an envelope", []byte(`{"value":1,"ts":1,"seq":1,"epoch":1}`), 0, campaign.ReasonFormat, 0},
		{"oversized", oversized, 0, campaign.ReasonSize, 0},
		{"another key", other.sign(t, 5, "kart0*", nil), 5, campaign.ReasonKey, 0},
		{"bad signature", badSig, 5, campaign.ReasonSignature, 0},
		{"another vehicle", k.sign(t, 5, "kart02", nil), 5, campaign.ReasonVehicle, 0},
		{"another DBC", k.sign(t, 5, "kart0*", func(b *campaign.Body) { b.DBC = "sha256:00" }), 5, campaign.ReasonDBC, 0},
		{"a policy that does not load", k.sign(t, 5, "kart0*", func(b *campaign.Body) { b.Policy = "defaults: {max_rate: fast}\n" }), 5, campaign.ReasonPolicy, 0},
		{"good", good, 5, "", 5},
		{"equal version", k.sign(t, 5, "kart0*", func(b *campaign.Body) { b.Policy = testPolicy }), 5, campaign.ReasonVersion, 5},
		{"older version", k.sign(t, 4, "kart0*", nil), 4, campaign.ReasonVersion, 5},
	}
	pub := brokertest.Connect(t, b.URL)
	check := func(name string, payload []byte, version uint64, reason campaign.Reason, applied uint64) {
		t.Helper()
		n := len(acks())
		pub.PublishQoS1(cfg.Campaign.Topic, payload, false)
		obs.WaitFor(name+": its acknowledgement", func(m []brokertest.Message) bool { return len(m) > n })
		a := acks()[n]
		result := campaign.ResultRefused
		if reason == "" {
			result = campaign.ResultApplied
		}
		if l := a.Last; l == nil || l.Result != result || l.Reason != reason || l.Version != version || a.Applied.Version != applied {
			t.Errorf("%s: acknowledged %+v %+v; want %s %q of version %d, version %d applied", name, a.Applied, a.Last, result, reason, version, applied)
		}
	}
	for _, r := range rows {
		check(r.name, r.payload, r.version, r.reason, r.applied)
	}
	if n := counter(t, car.camp.results.WithLabelValues(campaign.ResultApplied)); n != 1 {
		t.Errorf("candec_campaigns_total{result=applied} = %v, want 1", n)
	}

	// After a restart the car runs version 5 from its state file and
	// still refuses an older or equal one; the retained good campaign,
	// delivered again, is no new outcome.
	car.stop(t)
	pub.PublishQoS1(cfg.Campaign.Topic, good, true)
	n := len(acks())
	car = startService(t, cfg, db)
	obs.WaitFor("the acknowledgement after the restart", func(m []brokertest.Message) bool { return len(m) > n })
	if a := acks()[n]; a.Applied.Version != 5 || a.Last != nil {
		t.Fatalf("after the restart: acknowledged %+v %+v; want version 5 applied, no outcome yet", a.Applied, a.Last)
	}
	if v := car.engine.PolicyVersion(); v != 5 {
		t.Errorf("after the restart the engine runs version %d, want 5", v)
	}
	check("older version after the restart", k.sign(t, 4, "kart0*", nil), 4, campaign.ReasonVersion, 5)
	check("equal version after the restart", rows[9].payload, 5, campaign.ReasonVersion, 5)
	if err := car.ReloadPolicy(context.Background()); !errors.Is(err, ErrCampaignPolicy) {
		t.Errorf("SIGHUP's reload with a campaign applied: %v, want ErrCampaignPolicy", err)
	}
	if b, err := os.ReadFile(cfg.Policy); err != nil || string(b) != testPolicy {
		t.Errorf("the policy file the user named holds %q (%v), want it untouched", b, err)
	}
}

// TestCampaignConfig: campaign keys that cannot work are refused at
// start, each naming its key.
func TestCampaignConfig(t *testing.T) {
	on := []Override{{Key: "dbc", Value: "a.dbc"}, {Key: "vehicle", Value: "kart01"}, {Key: "campaign_topic", Value: "yukart/policy"},
		{Key: "campaign_key", Value: "k.pub"}, {Key: "campaign_state", Value: "s.json"}}
	if _, err := LoadConfig("", on); err != nil {
		t.Fatalf("campaigns on: %v", err)
	}
	if _, err := LoadConfig("", []Override{{Key: "dbc", Value: "a.dbc"}, {Key: "vehicle", Value: "kart/01"}}); err != nil {
		t.Errorf("campaigns off, a vehicle set: %v; want it taken (checked only with campaigns on)", err)
	}
	for _, tc := range []struct {
		name string
		set  []Override
		want string
	}{
		{"no vehicle", []Override{{Key: "vehicle", Value: ""}}, "vehicle: campaign_topic needs"},
		{"a vehicle of two levels", []Override{{Key: "vehicle", Value: "kart/01"}}, "vehicle: campaign_topic needs"},
		{"no key", []Override{{Key: "campaign_key", Value: ""}}, "campaign_key: campaign_topic needs"},
		{"no state", []Override{{Key: "campaign_state", Value: ""}}, "campaign_state: campaign_topic needs"},
		{"a wildcard topic", []Override{{Key: "campaign_topic", Value: "yukart/+"}}, "campaign_topic:"},
		{"the status topic", []Override{{Key: "campaign_topic", Value: DefaultStatusTopic}}, "campaign_topic:"},
		{"acknowledged on the campaign topic", []Override{{Key: "campaign_ack_topic", Value: "yukart/policy"}}, "campaign_ack_topic:"},
		{"under the raw filter", []Override{{Key: "raw_topic", Value: "yukart/+"}}, "is matched by raw_topic"},
		{"under the signal topics", []Override{{Key: "campaign_topic", Value: "yukart/vehicle/policy"}}, "campaign_topic:"},
	} {
		_, err := LoadConfig("", append(append([]Override(nil), on...), tc.set...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestCampaignNotBefore: a campaign valid only from a time ahead waits,
// acknowledged so, and is applied once the time has come.
func TestCampaignNotBefore(t *testing.T) {
	b := brokertest.StartMosquitto(t, mosquitto.Options{})
	k := newCampKit(t)
	cfg := k.carConfig(t, b.URL, "kart01")
	obs := brokertest.Connect(t, b.URL)
	obs.Subscribe(cfg.Campaign.AckTopic)
	startService(t, cfg, loadTestDB(t))
	obs.WaitFor("the first acknowledgement", func(m []brokertest.Message) bool { return len(m) > 0 })
	at := time.Now().Add(time.Second)
	pub := brokertest.Connect(t, b.URL)
	pub.PublishQoS1(cfg.Campaign.Topic, k.sign(t, 2, "kart01", func(b *campaign.Body) { b.NotBefore = at }), true)
	var outcomes []string
	var last campaign.Ack
	obs.WaitFor("the campaign applied", func(m []brokertest.Message) bool {
		outcomes = outcomes[:0]
		for _, a := range latestAll(t, m) {
			if a.Last != nil {
				outcomes = append(outcomes, fmt.Sprintf("%s %d", a.Last.Result, a.Applied.Version))
				last = a
			}
		}
		return len(outcomes) > 0 && outcomes[len(outcomes)-1] == "applied 2"
	})
	if fmt.Sprint(outcomes) != "[waiting 0 applied 2]" {
		t.Errorf("acknowledged %v, want it waiting, then applied", outcomes)
	}
	if last.Applied.At.Before(at.Truncate(time.Second)) {
		t.Errorf("applied at %v, before its not_before %v", last.Applied.At, at)
	}
}

// latestAll parses every acknowledgement of msgs, in order.
func latestAll(t *testing.T, msgs []brokertest.Message) []campaign.Ack {
	t.Helper()
	var out []campaign.Ack
	for _, m := range msgs {
		a, err := campaign.ParseAck(m.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}
