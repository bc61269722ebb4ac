package service_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/service"
)

// A decoder built from the defaults and a DBC. New checks all it can
// before Run: the configuration, each signal's topic, the TLS files; it
// does not connect.
func Example() {
	db, err := dbc.NewDatabase([]*dbc.Message{{
		Name: "Wheels", ID: 0x100, Length: 8, Signals: []*dbc.Signal{
			{Name: "Speed", Length: 16, Factor: 0.01, Unit: "km/h"},
			{Name: "Gear", Start: 16, Length: 4},
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	cfg := service.DefaultConfig()
	cfg.DBC = []string{"car.dbc"} // what a reload reads again
	cfg.MetricsAddr = ""          // no /metrics endpoint
	svc, err := service.New(cfg, db, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Broker, cfg.RawTopic)
	fmt.Println(svc.Topics())
	// Output:
	// mqtt://127.0.0.1:1883 yukart/can/raw
	// [yukart/vehicle/Speed yukart/vehicle/Gear]
}

// What a program on the car runs: the decoder of a DBC file on the car's
// broker until SIGTERM or Ctrl-C, its log on standard error. Run returns
// nil once it has published "offline" and closed the connection.
func ExampleService_Run() {
	cfg := service.DefaultConfig()
	cfg.Broker = "mqtt://127.0.0.1:1883"
	cfg.ClientID = "svc-decoder"
	cfg.DBC = []string{"/etc/candec/car.dbc"}
	db, err := dbc.Load(cfg.DBC...)
	if err != nil {
		log.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	svc, err := service.New(cfg, db, logger, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := svc.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
