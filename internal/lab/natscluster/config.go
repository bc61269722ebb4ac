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
	// (nats stream add --config).
	StreamFile = "stream.json"
)

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

// CarUser returns a car's line of AccountsFile: the user of its
// certificate, which may connect over MQTT only, publish under
// fleet.<id>.> only and subscribe to nothing.
func CarUser(id string) (string, error) {
	if err := ValidVehicle(id); err != nil {
		return "", err
	}
	return fmt.Sprintf(`{ user: "CN=%s", allowed_connection_types: ["MQTT"], permissions: { publish: ["fleet.%s.>"], subscribe: { deny: [">"] } } }`, id, id), nil
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
	b, err := os.ReadFile(filepath.Join(dir, StreamFile))
	if err != nil {
		return cfg, fmt.Errorf("natscluster: %w", err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("natscluster: %s: %w", filepath.Join(dir, StreamFile), err)
	}
	if cfg.Name == "" || len(cfg.Subjects) == 0 {
		return cfg, fmt.Errorf("natscluster: %s: a stream needs a name and subjects", filepath.Join(dir, StreamFile))
	}
	return cfg, nil
}

// DeployPartitions is how many partitions deploy/nats/stream.json
// splits the fleet into (TestReadStream keeps it true).
const DeployPartitions = 16

// Partitions returns how many partitions the stream's subject transform
// makes ({{partition(n,1)}}), with the subject of partition k being
// PartitionFilter(k).
func Partitions(cfg jetstream.StreamConfig) (int, error) {
	if cfg.SubjectTransform == nil {
		return 0, fmt.Errorf("natscluster: stream %s has no subject transform", cfg.Name)
	}
	d := cfg.SubjectTransform.Destination
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
