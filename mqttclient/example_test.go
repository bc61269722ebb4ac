package mqttclient_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/mqttclient"
)

// What another program on the car starts from: a connection to the
// car's broker that subscribes to every signal on each (re)connection,
// waits for its first connection, and publishes its own status at QoS 1,
// retained. Without a broker on the car this example only compiles.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	attempts := mqttclient.NewAttempts()
	cfg := mqttclient.Config{
		Settings: mqttclient.Settings{Broker: "mqtt://127.0.0.1:1883", ClientID: "svc-nav"},
		Will:     &mqttclient.Message{Topic: "svc-nav/status", Payload: []byte("offline"), QoS: 1, Retain: true},
		OnUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			// A new session each time: subscribe again, off autopaho's
			// goroutine.
			go cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
				{Topic: "yukart/vehicle/+", QoS: 1},
			}})
		},
		OnConnectError: attempts.Record,
		OnPublish: func(p *paho.Publish) {
			fmt.Printf("%s %s\n", p.Topic, p.Payload)
		},
	}
	cm, err := mqttclient.Connect(ctx, cfg)
	if err != nil {
		log.Fatal(err) // a bad URL or TLS file, said before any attempt
	}
	defer cm.Disconnect(context.Background())
	if err := attempts.Await(ctx, cm, cfg.Broker, 10*time.Second); err != nil {
		log.Fatal(err) // names the broker and why: refused, unreachable, …
	}
	status := mqttclient.NewPublisher(cm, "svc-nav/status", 1, true, "text/plain")
	if err := status.Confirm(ctx, []byte("online")); err != nil {
		log.Fatal(err) // the broker refused it: an ACL
	}
	<-ctx.Done()
}

// A broker URL without a port gets the scheme's: 1883, or 8883 for TLS.
func ExampleParseURL() {
	for _, raw := range []string{"mqtt://broker.local", "mqtts://broker.local", "127.0.0.1:1883"} {
		u, err := mqttclient.ParseURL(raw)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(u.Scheme, u.Host)
	}
	// Output:
	// mqtt broker.local:1883
	// mqtts broker.local:8883
	// mqttclient: bad broker URL "127.0.0.1:1883": must be mqtt://host:port or mqtts://host:port
}

// Two topic filters overlap when some topic matches both: a program
// that publishes on one and subscribes to the other hears itself.
func ExampleOverlap() {
	fmt.Println(mqttclient.Overlap("yukart/vehicle/+", "yukart/vehicle/Speed"))
	fmt.Println(mqttclient.Overlap("yukart/can/raw", "yukart/vehicle/#"))
	// Output:
	// true
	// false
}
