package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/bench/report"
)

const scenariosFile = "../../benchmarks/scenarios.yaml"

func TestBenchPlanOnly(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), env{nil, &out, &bytes.Buffer{}},
		[]string{"bench", "--scenarios", scenariosFile, "--profile", "mix", "--repeat", "3", "--plan-only"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"profile mix: 14 scenarios, each run 3 time(s)", "fullbus-8-none", "car-yukart-default", "(service default)", "estimated time: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
	err = run(context.Background(), env{nil, &bytes.Buffer{}, &bytes.Buffer{}},
		[]string{"bench", "--scenarios", scenariosFile, "--profile", "nope", "--plan-only"})
	if err == nil || exitCode(err) != 2 {
		t.Errorf("unknown profile: %v (exit %d), want exit status 2", err, exitCode(err))
	}
}

func TestBenchSummary(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	for i, env := range []float64{4200, 4300, 4400} {
		r := report.Result{Scenario: "car-8-50hz", Profile: "mix", Host: "desk", Time: t0.Add(time.Duration(i) * time.Minute),
			Load: "car", Signals: "8", Cap: "50 Hz", Stream: "signals", EnvelopeSubscribers: 5, Envelopes: env, Deliveries: env * 5}
		if _, err := report.AppendFile(dir, &r); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	err := run(context.Background(), env{nil, &bytes.Buffer{}, &stderr},
		[]string{"bench", "summary", "--scenarios", scenariosFile, "--results", dir, "--host", "desk"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "baseline-desk.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Bench baseline: desk", "| car-8-50hz | car | 8 | 50 Hz | signals | 4,300 | 21,500 |", "| car-8-50hz | 4,300 → 4,300 |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("baseline lacks %q:\n%s", want, b)
		}
	}
	err = run(context.Background(), env{nil, &bytes.Buffer{}, &bytes.Buffer{}},
		[]string{"bench", "summary", "--scenarios", scenariosFile, "--results", dir, "--host", "other"})
	if err == nil {
		t.Error("summary of a host without results: nil error, want one")
	}
}

func TestHostName(t *testing.T) {
	t.Setenv(hostEnv, "bench-box")
	if got := hostName(""); got != "bench-box" {
		t.Errorf("hostName with $%s = %q, want bench-box", hostEnv, got)
	}
	if got := hostName("flag"); got != "flag" {
		t.Errorf("hostName(flag) = %q, want flag", got)
	}
	t.Setenv(hostEnv, "")
	if got := hostName(""); got == "" || strings.Contains(got, ".") {
		t.Errorf("hostName() = %q, want the machine's short name", got)
	}
}

func TestTuneCommand(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), env{nil, &out, &bytes.Buffer{}},
		[]string{"tune", "--dbc", "../../testdata/mix8.dbc", "--policy", "../../benchmarks/policies/cap-20hz.yaml", "--subscribers", "5", "--top", "3", "../../testdata/idle.log"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy: ../../benchmarks/policies/cap-20hz.yaml", "891 frames/s", "deliveries/s to 5 all-signal subscribers", "top 3 of 216 signals", "cap 20 Hz"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tune output lacks %q:\n%s", want, out.String())
		}
	}
	err = run(context.Background(), env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"tune"})
	if err == nil || exitCode(err) != 2 {
		t.Errorf("tune without a capture: %v, want exit status 2", err)
	}
}
