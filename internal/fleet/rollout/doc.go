// Package rollout is the cloud's side of campaigns (package campaign):
// it reads what each car of a fleet's broker acknowledged, and pushes a
// signed campaign, retained, to the policy topic of each car it is for.
// `candec campaign push` and `candec campaign status` are its commands;
// docs/campaigns.md describes both.
//
// # Knowing the fleet
//
// The broker holds, retained, each car's acknowledgement (AckTopic) and
// the campaign pushed to it (PolicyTopic). Read reads them all: it
// subscribes at QoS 0, then publishes a message on FenceTopic, which it
// also subscribes to. The broker sends a subscription's retained
// messages before it handles the client's next packet, and delivers a
// client's messages in order: when the fence comes back, every retained
// message has come before it. No wait is guessed.
//
// # MQTT 5 and 3.1.1
//
// It speaks MQTT 5 through paho (package mqttclient) by default, and
// MQTT 3.1.1 through package mqtt311 when Config.Protocol says so: the
// NATS cluster of deploy/nats speaks only 3.1.1. The protocol is the
// connection only (the link interface); which cars, the fence and the
// report are one code path for both. A 3.1.1 PUBACK carries no reason:
// a push the broker's permissions refuse may be acknowledged and
// dropped (nats-server does), which Read, not Push, then shows.
package rollout
