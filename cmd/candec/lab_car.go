//go:build car

package main

import "context"

// The car's build (go build -tags car) leaves out the developer's
// commands, and with them the bench harness, the embedded broker, the
// plotting and the tuning: code that runs nowhere on the car. Their rows
// stay in commands with no function, so that the usage lists only what
// this build has and naming one of them says where it is.
var (
	runDemo   func(ctx context.Context, e env, args []string) error
	runPlot   func(ctx context.Context, e env, args []string) error
	runTune   func(ctx context.Context, e env, args []string) error
	runBench  func(ctx context.Context, e env, args []string) error
	runIngest func(ctx context.Context, e env, args []string) error
)
