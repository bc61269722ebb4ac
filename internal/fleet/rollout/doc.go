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
package rollout
