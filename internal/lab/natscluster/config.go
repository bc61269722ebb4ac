package natscluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// The files of the configuration directory (deploy/nats).
const (
	// ConfigFile is every node's configuration.
	ConfigFile = "fleet.conf"
	// AccountsFile holds the users and their permissions; ConfigFile
	// includes it.
	AccountsFile = "accounts.conf"
	// StreamFile is the fleet's stream, as the JetStream API writes it
	// (nats stream add --config): FLEET, sourced from MsgsFile's stream
	// through SourceConsumerFile's consumer.
	StreamFile = "stream.json"
	// MsgsFile is nats-server's own stream of the MQTT QoS 1 messages
	// ($MQTT_msgs), made by the operator before the first car connects
	// (the server then uses it as it is).
	MsgsFile = "mqtt-msgs.json"
	// SourceConsumerFile is the durable consumer of MsgsFile's stream
	// through which StreamFile's stream sources the cars' windows
	// (nats consumer add --config).
	SourceConsumerFile = "source-consumer.json"
)

// MsgsStream is the name nats-server gives the stream in which it
// keeps an account's MQTT QoS 1 messages, and acknowledges a car's
// PUBLISH once a message is stored there.
const MsgsStream = "$MQTT_msgs"

// The marks of AccountsFile between which the cars' lines are.
const (
	carsBegin = "# cars: begin"
	carsEnd   = "# cars: end"
)

// ErrVehicle: a vehicle id that is not one topic level of letters,
// digits, '-' and '_'.
var ErrVehicle = errors.New("natscluster: a vehicle id is 1 to 64 letters, digits, '-' or '_'")

// ValidVehicle reports whether id may name a car on the cluster: one
// subject token that is neither a wildcard nor holds NATS's separator
// ('.') or MQTT's ('/', '+', '#'), a space or anything else that a
// subject or the user's certificate subject would read otherwise.
func ValidVehicle(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("%w: %q", ErrVehicle, id)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
		if !ok {
			return fmt.Errorf("%w: %q holds %q", ErrVehicle, id, r)
		}
	}
	return nil
}

// CarSubjects are the subjects a car may publish, %s its id: what its
// bridge sends (deploy/mosquitto/bridge.conf, TestCarSubjects keeps
// them alike), and nothing else. Whole subjects, not fleet.<id>.>: a
// subject's length is then bounded, and one too long for FLEET's
// source to store (its header names the subject, and a header is at
// most 64 KiB) would hold every car's windows behind it.
var CarSubjects = []string{"fleet.%s.yukart.window", "fleet.%s.yukart.decoder.status", "fleet.%s.yukart.decoder.campaign", "fleet.%s.bridge.state"}

// CarPolicy is the one subject a car may subscribe to, %s its id: its
// policy topic (fleet/<id>/yukart/policy, where campaigns come down:
// docs/campaigns.md), which its bridge takes in (bridge.conf's "topic
// policy in"). An allow list and no deny: nats-server lets an MQTT
// client's QoS 1 subscription make its JetStream consumer and
// subscribe to the consumer's $MQTT.sub.<id> unless a deny says
// otherwise, so a deny of ">" would refuse the bridge's subscription.
const CarPolicy = "fleet.%s.yukart.policy"

// CampaignsUser is the user of AccountsFile who pushes campaigns (its
// certificate's common name), with the rights of deploy/mosquitto's
// fleet.acl user of that name.
const CampaignsUser = "campaigns"

// CarUser returns a car's line of AccountsFile: the user of its
// certificate, which may connect over MQTT only, publish CarSubjects
// only and subscribe to its CarPolicy only.
func CarUser(id string) (string, error) {
	if err := ValidVehicle(id); err != nil {
		return "", err
	}
	subjects := make([]string, len(CarSubjects))
	for i, s := range CarSubjects {
		subjects[i] = `"` + fmt.Sprintf(s, id) + `"`
	}
	return fmt.Sprintf(`{ user: "CN=%s", allowed_connection_types: ["MQTT"], permissions: { publish: [%s], subscribe: ["%s"] } }`,
		id, strings.Join(subjects, ", "), fmt.Sprintf(CarPolicy, id)), nil
}

// Accounts returns the text of AccountsFile with the cars' lines
// between its marks replaced by one line per car of cars.
func Accounts(text string, cars []string) (string, error) {
	begin := strings.Index(text, carsBegin)
	end := strings.Index(text, carsEnd)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("natscluster: %s: no %q … %q marks around the cars' lines", AccountsFile, carsBegin, carsEnd)
	}
	lineStart := strings.LastIndexByte(text[:end], '\n') + 1
	indent := text[lineStart:end]
	var b strings.Builder
	b.WriteString(text[:begin+len(carsBegin)])
	b.WriteByte('\n')
	for _, id := range cars {
		line, err := CarUser(id)
		if err != nil {
			return "", err
		}
		if user := `user: "CN=` + id + `"`; strings.Contains(text[:begin], user) || strings.Contains(text[end:], user) {
			return "", fmt.Errorf("%w: %q is the name of another user of %s", ErrVehicle, id, AccountsFile)
		}
		b.WriteString(indent + line + "\n")
	}
	b.WriteString(text[lineStart:])
	return b.String(), nil
}

// CarLines returns the vehicle ids of the car lines between the marks
// of an AccountsFile text, and an error for a line between them that is
// not CarUser's line of its id.
func CarLines(text string) ([]string, error) {
	begin := strings.Index(text, carsBegin)
	end := strings.Index(text, carsEnd)
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("natscluster: %s: no %q … %q marks", AccountsFile, carsBegin, carsEnd)
	}
	var ids []string
	for _, line := range strings.Split(text[begin+len(carsBegin):end], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		id, _, ok := strings.Cut(strings.TrimPrefix(line, `{ user: "CN=`), `"`)
		want, err := CarUser(id)
		if !ok || err != nil || line != want {
			return nil, fmt.Errorf("natscluster: %s: %q is not a car's line (CarUser)", AccountsFile, line)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// ReadStream reads the fleet's stream from dir/StreamFile.
func ReadStream(dir string) (jetstream.StreamConfig, error) {
	var cfg jetstream.StreamConfig
	name := filepath.Join(dir, StreamFile)
	if err := readJSON(name, &cfg); err != nil {
		return cfg, err
	}
	if cfg.Name == "" || len(cfg.Subjects) == 0 && len(cfg.Sources) == 0 {
		return cfg, fmt.Errorf("natscluster: %s: a stream needs a name, and subjects or sources", name)
	}
	return cfg, nil
}

// Deploy is what the operator makes on the cluster, in this order
// (deploy/nats): MQTT's message stream, FLEET's source consumer on it,
// and FLEET. A window reaches FLEET only through the consumer, so that
// it leaves $MQTT_msgs only once FLEET has stored it.
type Deploy struct {
	// Msgs is MsgsFile's stream ($MQTT_msgs).
	Msgs jetstream.StreamConfig
	// Source is SourceConsumerFile's consumer of Msgs.
	Source jetstream.ConsumerConfig
	// Stream is StreamFile's stream (FLEET).
	Stream jetstream.StreamConfig
}

// ReadDeploy reads the three files of dir and checks that they fit
// together: Msgs is nats-server's MsgsStream; Stream sources Msgs
// through Source, by Source's name and deliver subject, its transform
// taking what Source's filter does (the cars' windows: nothing else of
// theirs, no status, acknowledgement or policy, reaches Stream); Source
// is durable and acknowledged by FLEET's flow control (stored, then
// acknowledged).
func ReadDeploy(dir string) (Deploy, error) {
	var d Deploy
	var err error
	if d.Stream, err = ReadStream(dir); err != nil {
		return d, err
	}
	msgs := filepath.Join(dir, MsgsFile)
	if err := readJSON(msgs, &d.Msgs); err != nil {
		return d, err
	}
	if d.Msgs.Name != MsgsStream || d.Msgs.Retention != jetstream.InterestPolicy {
		return d, fmt.Errorf("natscluster: %s: stream %q (%s), want %s with interest retention, as nats-server makes it", msgs, d.Msgs.Name, d.Msgs.Retention, MsgsStream)
	}
	cons := filepath.Join(dir, SourceConsumerFile)
	if err := readJSON(cons, &d.Source); err != nil {
		return d, err
	}
	if d.Source.Durable == "" || d.Source.DeliverSubject == "" || d.Source.AckPolicy != jetstream.AckFlowControlPolicy {
		return d, fmt.Errorf("natscluster: %s: want a durable push consumer (durable_name, deliver_subject) with ack_policy flow_control", cons)
	}
	var src *jetstream.StreamSource
	for _, s := range d.Stream.Sources {
		if s != nil && s.Name == d.Msgs.Name {
			src = s
		}
	}
	if len(d.Stream.Subjects) > 0 || len(d.Stream.Sources) != 1 || src == nil || src.Consumer == nil ||
		src.Consumer.Name != d.Source.Durable || src.Consumer.DeliverSubject != d.Source.DeliverSubject {
		return d, fmt.Errorf("natscluster: %s: stream %s must take no subjects and one source, %s through consumer %s on %s (%s)",
			filepath.Join(dir, StreamFile), d.Stream.Name, d.Msgs.Name, d.Source.Durable, d.Source.DeliverSubject, SourceConsumerFile)
	}
	if tr := src.SubjectTransforms; len(tr) != 1 || tr[0].Source != d.Source.FilterSubject {
		return d, fmt.Errorf("natscluster: %s: the source's one subject transform must take what %s's filter_subject %q does",
			filepath.Join(dir, StreamFile), SourceConsumerFile, d.Source.FilterSubject)
	}
	return d, nil
}

// readJSON reads name's JSON into v.
func readJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("natscluster: %s: %w", name, err)
	}
	return nil
}

// DeployPartitions is how many partitions deploy/nats/stream.json
// splits the fleet into (TestReadStream keeps it true).
const DeployPartitions = 16

// Partitions returns how many partitions the stream's subject transform
// makes ({{partition(n,1)}}), with the subject of partition k being
// PartitionFilter(k): the transform of its one source (StreamFile), or
// the stream's own for a stream of subjects.
func Partitions(cfg jetstream.StreamConfig) (int, error) {
	var d string
	switch {
	case len(cfg.Sources) == 1 && cfg.Sources[0] != nil && len(cfg.Sources[0].SubjectTransforms) == 1:
		d = cfg.Sources[0].SubjectTransforms[0].Destination
	case len(cfg.Sources) == 0 && cfg.SubjectTransform != nil:
		d = cfg.SubjectTransform.Destination
	default:
		return 0, fmt.Errorf("natscluster: stream %s has no subject transform, or not one only", cfg.Name)
	}
	_, rest, ok := strings.Cut(d, "{{partition(")
	num, _, ok2 := strings.Cut(rest, ",")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || !ok2 || err != nil || n < 1 || !strings.HasPrefix(d, PartitionPrefix+".{{partition(") {
		return 0, fmt.Errorf("natscluster: stream %s: transform %q is not %s.{{partition(n,1)}}…", cfg.Name, d, PartitionPrefix)
	}
	return n, nil
}

// PartitionPrefix is the first token of a stored subject:
// p.<partition>.fleet.<vehicle>.….
const PartitionPrefix = "p"

// PartitionFilter returns the subject filter of partition k.
func PartitionFilter(k int) string { return PartitionPrefix + "." + strconv.Itoa(k) + ".>" }
