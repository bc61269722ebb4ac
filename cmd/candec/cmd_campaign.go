package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/readfile"
	"github.com/yukart/candec/internal/cmdkit/brokerflags"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/fleet/rollout"
	"github.com/yukart/candec/pipeline"
)

// runCampaign is `candec campaign keygen|sign|push|status`: a tuned
// policy signed and pushed to a fleet's cars (docs/campaigns.md).
func runCampaign(ctx context.Context, e cli.Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "keygen":
			return runCampaignKeygen(e, args[1:])
		case "sign":
			return runCampaignSign(ctx, e, args[1:])
		case "push":
			return runCampaignPush(ctx, e, args[1:])
		case "status":
			return runCampaignStatus(ctx, e, args[1:])
		}
	}
	fs := cli.NewFlags(e, "campaign", "keygen|sign|push|status [flags]  (candec campaign keygen -h, …; docs/campaigns.md)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Exit(2, errors.New("campaign: say which: keygen, sign, push or status"))
	}
	return cli.Exit(2, fmt.Errorf("campaign: unknown subcommand %q: keygen, sign, push or status", fs.Arg(0)))
}

// runCampaignKeygen makes a key pair: the private key, kept by whoever
// signs, and the public key the cars trust.
func runCampaignKeygen(e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "campaign keygen", "-o KEY  (writes KEY, the private key, and KEY.pub)")
	out := fs.String("o", "", "the private key `FILE` (mode 0600); the public key is FILE.pub. Neither may exist: a key is never replaced")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cli.CheckArgs(fs, 0, ""); err != nil {
		return err
	}
	if *out == "" || *out == "-" {
		return cli.Exit(2, errors.New("campaign keygen: -o FILE is required (a key goes to a file, never to standard output)"))
	}
	priv, pub, err := campaign.NewKey()
	if err != nil {
		return err
	}
	if err := writeNew(*out, priv, 0o600); err != nil {
		return fmt.Errorf("campaign keygen: %w", err)
	}
	if err := writeNew(*out+".pub", pub, 0o644); err != nil {
		os.Remove(*out) // made just now: no key without its public half
		return fmt.Errorf("campaign keygen: %w", err)
	}
	k, _ := campaign.ParsePublicKey(pub)
	_, err = fmt.Fprintf(e.Stdout, "key %s (id %s): sign with %s; give the cars %s (campaign_key)\n", *out, campaign.KeyID(k), *out, *out+".pub")
	return err
}

// writeNew writes a file that must not exist yet.
func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: a key is never replaced; choose another name", name)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// runCampaignSign signs a policy file as a campaign.
func runCampaignSign(ctx context.Context, e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "campaign sign", "--key KEY --policy FILE --version N --vehicles GLOB --dbc [IFACE=]FILE -o C.json")
	key := fs.String("key", "", "the private key `FILE` (campaign keygen)")
	policy := fs.String("policy", "", "the policy `FILE` (docs/policy.md; candec tune --write-policy makes one)")
	version := fs.String("version", "", fmt.Sprintf("the campaign's version `N`, 1 to %d: a car applies only a version newer than its last", campaign.MaxVersion))
	vehicles := fs.String("vehicles", "", "the vehicle ids it is for, a `GLOB` ('kart0[1-3]', '*')")
	var dbcs dbc.BusFiles
	fs.Var(&dbcs, "dbc", "the DBC the policy was tuned for, as the cars have it: "+cli.DBCHelp)
	notBefore := fs.String("not-before", "", "RFC 3339 `TIME` before which no car applies it (default: now)")
	out := fs.String("o", "-", "the campaign `FILE` (- for standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cli.CheckArgs(fs, 0, ""); err != nil {
		return err
	}
	b := campaign.Body{Vehicles: *vehicles, NotBefore: time.Now().UTC().Truncate(time.Second)}
	v, err := strconv.ParseUint(*version, 10, 64)
	if err != nil || v == 0 || v > campaign.MaxVersion {
		return badFlag("campaign sign", "version", strconv.Quote(*version), fmt.Sprintf("an integer from 1 to %d", campaign.MaxVersion))
	}
	b.Version = v
	if *notBefore != "" {
		if b.NotBefore, err = time.Parse(time.RFC3339, *notBefore); err != nil {
			return badFlag("campaign sign", "not-before", strconv.Quote(*notBefore), "an RFC 3339 time, like 2026-12-04T21:00:00Z")
		}
	}
	switch {
	case *key == "" || *policy == "" || *vehicles == "" || dbcs.Empty():
		return cli.Exit(2, errors.New("campaign sign: --key, --policy, --vehicles and --dbc are required"))
	case !validGlob(*vehicles):
		return badFlag("campaign sign", "vehicles", strconv.Quote(*vehicles), "a glob of vehicle ids (path.Match), one topic level: no '/'")
	}
	if err := outfile.CheckNotInput(*out, *key, *policy); err != nil {
		return cli.Exit(2, fmt.Errorf("campaign sign: -o: %w", err))
	}
	kb, err := readfile.Read(ctx, *key, campaign.MaxKeyFileSize)
	if err != nil {
		return fmt.Errorf("campaign sign: --key: %w", err)
	}
	priv, err := campaign.ParsePrivateKey(kb)
	if err != nil {
		return fmt.Errorf("campaign sign: %s: %w", *key, err)
	}
	pb, err := readfile.Read(ctx, *policy, campaign.MaxSize)
	if err != nil {
		return fmt.Errorf("campaign sign: --policy: %w", err)
	}
	if _, err := pipeline.ParsePolicy(*policy, pb); err != nil {
		return fmt.Errorf("campaign sign: %w", err) // a car would refuse it
	}
	b.Policy = string(pb)
	if b.DBC, err = dbcs.Hash(ctx); err != nil {
		return fmt.Errorf("campaign sign: %w", err)
	}
	signed, err := campaign.Sign(priv, b)
	if err != nil {
		return fmt.Errorf("campaign sign: %w", err)
	}
	w, err := outfile.Create(*out, e.Stdout, *key, *policy)
	if err != nil {
		return fmt.Errorf("campaign sign: -o: %w", err)
	}
	defer w.Abort()
	if _, err := w.Write(signed); err != nil {
		return fmt.Errorf("campaign sign: %w", err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("campaign sign: %w", err)
	}
	fmt.Fprintf(e.Stderr, "campaign version %d for vehicles %q, policy %s, DBC %s, not before %s, key %s\n",
		b.Version, b.Vehicles, campaign.PolicyHash(pb), b.DBC, b.NotBefore.UTC().Format(time.RFC3339), campaign.KeyID(priv.Public().(ed25519.PublicKey)))
	return nil
}

func validGlob(g string) bool {
	_, err := path.Match(g, "")
	return err == nil && !strings.Contains(g, "/")
}

// campaignFleetFlags are push's and status's: the broker, and the
// fleet's topics.
type campaignFleetFlags struct {
	conn               *brokerflags.Flags
	policy, ack, fence *string
	timeout            *time.Duration
	mqtt               *string
}

func addCampaignFleetFlags(fs *flag.FlagSet) campaignFleetFlags {
	return campaignFleetFlags{
		conn:    cli.BrokerFlags(fs, "campaigns"),
		policy:  fs.String("policy-topic", rollout.DefaultPolicyTopic, "the cars' policy `TOPIC`, '+' standing for the vehicle"),
		ack:     fs.String("ack-topic", rollout.DefaultAckTopic, "the cars' acknowledgement `TOPIC`, '+' standing for the vehicle"),
		fence:   fs.String("fence-topic", rollout.DefaultFenceTopic, "a `TOPIC` the user writes and reads and no car writes: the mark that every retained message has come"),
		timeout: fs.Duration("timeout", rollout.DefaultTimeout, "bound on the connection and each step, `D`"),
		mqtt:    fs.String("mqtt", rollout.MQTT5.String(), "the MQTT `VERSION` to speak: 5, or 3.1.1 for a broker that speaks no MQTT 5 (the NATS cluster: docs/campaigns.md)"),
	}
}

func (f campaignFleetFlags) config(cmd string) (rollout.Config, error) {
	s, err := cli.BrokerSettings(cmd, f.conn)
	if err != nil {
		return rollout.Config{}, err
	}
	for name, t := range map[string]string{"policy-topic": *f.policy, "ack-topic": *f.ack} {
		if strings.Count(t, "+") != 1 || strings.Contains(t, "#") {
			return rollout.Config{}, badFlag(cmd, name, strconv.Quote(t), "a topic with one '+' level for the vehicle")
		}
	}
	if err := cli.DurationIn(cmd, "--timeout", *f.timeout, 100*time.Millisecond, cli.MaxConnectTimeout); err != nil {
		return rollout.Config{}, err
	}
	proto, err := rollout.ParseProtocol(*f.mqtt)
	if err != nil {
		return rollout.Config{}, badFlag(cmd, "mqtt", strconv.Quote(*f.mqtt), "5 or 3.1.1")
	}
	return rollout.Config{Settings: s, PolicyTopic: *f.policy, AckTopic: *f.ack, FenceTopic: *f.fence, Timeout: *f.timeout, Protocol: proto}, nil
}

// runCampaignPush publishes a signed campaign, retained, to each car it
// is for.
func runCampaignPush(ctx context.Context, e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "campaign push", "--broker URL [flags] C.json")
	ff := addCampaignFleetFlags(fs)
	extra := fs.String("vehicles", "", "vehicle ids to push to besides those the broker knows (comma-separated; the campaign's glob still applies)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cli.CheckArgs(fs, 1, "C.json"); err != nil {
		return err
	}
	cfg, err := ff.config("campaign push")
	if err != nil {
		return err
	}
	var ids []string
	for _, id := range strings.Split(*extra, ",") {
		if id = strings.TrimSpace(id); id != "" {
			if !campaign.ValidVehicle(id) {
				return badFlag("campaign push", "vehicles", strconv.Quote(id), "vehicle ids, each one topic level")
			}
			ids = append(ids, id)
		}
	}
	payload, err := readfile.Read(ctx, fs.Arg(0), campaign.MaxSize)
	if err != nil {
		return fmt.Errorf("campaign push: %w", err)
	}
	body, err := campaign.Peek(payload)
	if err != nil {
		return fmt.Errorf("campaign push: %s: %w", fs.Arg(0), err)
	}
	pushed, err := rollout.Push(ctx, cfg, payload, ids)
	for _, p := range pushed {
		fmt.Fprintf(e.Stdout, "pushed version %d to %s (%s)\n", body.Version, p.Vehicle, p.Topic)
	}
	if err != nil {
		return fmt.Errorf("campaign push: %w", err)
	}
	if len(pushed) == 0 {
		return fmt.Errorf("campaign push: no car the broker knows (or --vehicles names) matches %q: nothing pushed", body.Vehicles)
	}
	return nil
}

// runCampaignStatus lists what each car runs and what became of its
// last campaign.
func runCampaignStatus(ctx context.Context, e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "campaign status", "--broker URL [flags] [GLOB]")
	ff := addCampaignFleetFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		if err := cli.CheckArgs(fs, 1, "GLOB"); err != nil {
			return err
		}
	}
	glob := fs.Arg(0)
	if fs.NArg() > 1 || (glob != "" && !validGlob(glob)) {
		return cli.Exit(2, fmt.Errorf("campaign status: want at most one GLOB of vehicle ids, got %q", fs.Args()))
	}
	cfg, err := ff.config("campaign status")
	if err != nil {
		return err
	}
	cars, err := rollout.Read(ctx, cfg, glob)
	if err != nil {
		return fmt.Errorf("campaign status: %w", err)
	}
	if err := rollout.WriteStatus(e.Stdout, cars); err != nil {
		return fmt.Errorf("campaign status: write standard output: %w", err)
	}
	return nil
}
