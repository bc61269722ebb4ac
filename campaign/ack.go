package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Results of an acknowledgement's Last.
const (
	ResultApplied = "applied"
	ResultRefused = "refused"
	// ResultWaiting: a campaign valid only from its not_before, which
	// the car will apply then.
	ResultWaiting = "waiting"
)

// Ack is a car's acknowledgement, retained on its campaign status
// topic: what it runs, and what became of the last campaign it took.
type Ack struct {
	// Vehicle is the car's id.
	Vehicle string `json:"vehicle"`
	// Applied is the campaign the car runs; version 0 is none (the car
	// runs its policy file, or the built-in policy).
	Applied Applied `json:"applied"`
	// Last is the last campaign the car took, when it took one since it
	// started.
	Last *Outcome `json:"last,omitempty"`
}

// Applied is the policy a car runs.
type Applied struct {
	Version uint64 `json:"version"`
	// Hash is the policy's PolicyHash; empty for version 0.
	Hash string `json:"hash,omitempty"`
	// At is when the car applied it; zero for version 0.
	At time.Time `json:"at,omitzero"`
}

// Outcome is what became of one campaign.
type Outcome struct {
	Version uint64    `json:"version,omitempty"` // 0 when it could not be read
	Result  string    `json:"result"`            // ResultApplied, ResultRefused or ResultWaiting
	Reason  Reason    `json:"reason,omitempty"`  // with ResultRefused
	Detail  string    `json:"detail,omitempty"`  // what was wrong
	At      time.Time `json:"at"`
}

// MaxAckSize bounds an acknowledgement a reader parses.
const MaxAckSize = 16 << 10

// ParseAck reads an acknowledgement.
func ParseAck(payload []byte) (Ack, error) {
	var a Ack
	if len(payload) > MaxAckSize {
		return a, fmt.Errorf("campaign: acknowledgement of %d bytes, over %d", len(payload), MaxAckSize)
	}
	if err := json.Unmarshal(payload, &a); err != nil {
		return a, fmt.Errorf("campaign: acknowledgement: %w", err)
	}
	if a.Vehicle == "" {
		return a, errors.New("campaign: acknowledgement: no vehicle")
	}
	return a, nil
}

// Topic returns a topic of vehicle under the fleet's prefix:
// Topic("fleet/+/yukart/policy", "kart01") is "fleet/kart01/yukart/policy".
// The template's single "+" level stands for the vehicle.
func Topic(template, vehicle string) string {
	levels := strings.Split(template, "/")
	for i, l := range levels {
		if l == "+" {
			levels[i] = vehicle
			break
		}
	}
	return strings.Join(levels, "/")
}

// VehicleOf returns the level of topic that template's "+" stands for,
// and false when topic is not of template.
func VehicleOf(template, topic string) (string, bool) {
	tl, got := strings.Split(template, "/"), strings.Split(topic, "/")
	if len(tl) != len(got) {
		return "", false
	}
	vehicle, found := "", false
	for i := range tl {
		switch {
		case tl[i] == "+" && !found:
			vehicle, found = got[i], true
		case tl[i] != got[i]:
			return "", false
		}
	}
	return vehicle, found && vehicle != ""
}
