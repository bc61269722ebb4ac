package natscluster

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestValidVehicle(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"kart01", true}, {"car_00001", true}, {"KART-7", true},
		{"", false}, {"kart.01", false}, {"kart/01", false}, {"*", false}, {">", false},
		{"kart+", false}, {"#", false}, {"kart 01", false}, {`kart"01`, false}, {"CN=x", false},
		{"kärt", false}, {strings.Repeat("k", 64), true}, {strings.Repeat("k", 65), false},
	} {
		err := ValidVehicle(tc.id)
		if got := err == nil; got != tc.ok {
			t.Errorf("ValidVehicle(%q) = %v, want ok %v", tc.id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrVehicle) {
			t.Errorf("ValidVehicle(%q) = %v, want ErrVehicle", tc.id, err)
		}
		if _, err := CarUser(tc.id); (err == nil) != tc.ok {
			t.Errorf("CarUser(%q): %v, want ok %v", tc.id, err, tc.ok)
		}
	}
}

// TestDeployAccounts reads deploy/nats/accounts.conf: its car lines are
// CarUser's, and Accounts replaces them with the given cars'.
func TestDeployAccounts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", ConfigDir, AccountsFile))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := CarLines(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatalf("%s lists no car", AccountsFile)
	}
	text, err := Accounts(string(b), []string{"car00000", "car00001"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := CarLines(text)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"car00000", "car00001"}; !slices.Equal(got, want) {
		t.Fatalf("cars after Accounts: %q, want %q", got, want)
	}
	if !strings.Contains(text, `user: "CN=ingest"`) {
		t.Fatal("Accounts lost the ingest's user")
	}
	if _, err := Accounts(string(b), []string{"kart.01"}); !errors.Is(err, ErrVehicle) {
		t.Fatalf("Accounts with car kart.01: %v, want ErrVehicle", err)
	}
	if _, err := Accounts("accounts {}", nil); err == nil {
		t.Fatal("Accounts of a text without the marks: no error")
	}
	if _, err := CarLines(strings.Replace(string(b), `publish: ["fleet.kart01.>"]`, `publish: ["fleet.>"]`, 1)); err == nil {
		t.Fatal("CarLines took a car line that publishes under fleet.>")
	}
}

func TestReadStream(t *testing.T) {
	cfg, err := ReadStream(filepath.Join("..", "..", "..", ConfigDir))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Replicas != 3 || cfg.SubjectTransform == nil || !strings.Contains(cfg.SubjectTransform.Destination, "partition(") {
		t.Fatalf("stream %+v: want R3, partitioned", cfg)
	}
	if n, err := Partitions(cfg); err != nil || n != DeployPartitions {
		t.Fatalf("Partitions = %d, %v; want %d", n, err, DeployPartitions)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StreamFile), []byte(`{"name": "FLEET"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStream(dir); err == nil || !strings.Contains(err.Error(), StreamFile) {
		t.Fatalf("ReadStream of a broken file: %v, want an error naming it", err)
	}
}

// TestDeployEnv: every node's environment file sets exactly the FLEET_
// variables fleet.conf reads, and so does Start.
func TestDeployEnv(t *testing.T) {
	dir := filepath.Join("..", "..", "..", ConfigDir)
	conf, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range strings.FieldsFunc(string(conf), func(r rune) bool { return r != '_' && (r < 'A' || r > 'Z') }) {
		if strings.HasPrefix(f, "FLEET_") && !slices.Contains(want, f) {
			want = append(want, f)
		}
	}
	slices.Sort(want)
	for i := 1; i <= DefaultNodes; i++ {
		name := filepath.Join(dir, "nats"+strconv.Itoa(i)+".env")
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := envKeys(string(b)); !slices.Equal(got, want) {
			t.Errorf("%s sets %q, fleet.conf reads %q", name, got, want)
		}
	}
	c, err := prepare(Options{ConfigDir: dir, Dir: t.TempDir(), Nodes: DefaultNodes}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := envKeys(strings.Join(c.Nodes[0].env, "\n")); !slices.Equal(got, want) {
		t.Errorf("Start sets %q, fleet.conf reads %q", got, want)
	}
}

// envKeys returns the sorted FLEET_ keys of KEY=value lines.
func envKeys(text string) []string {
	var keys []string
	for _, line := range strings.Split(text, "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "FLEET_") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
