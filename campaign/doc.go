// Package campaign is the format of a candec campaign: a policy signed
// with Ed25519 for a set of vehicles, and the car's acknowledgement of
// it. The cloud signs and pushes a campaign (`candec campaign`); each
// car (`candec run`) verifies it and applies it. Another Go program can
// sign, verify and read campaigns and acknowledgements with this
// package alone: it uses the standard library only.
//
// # The file
//
// A campaign is one JSON object; docs/campaigns.md gives every field.
//
//	{"campaign":"<base64 of the body>","key":"<key id>","sig":"<base64 signature>"}
//
// The signature is over the body's bytes exactly as they were signed,
// carried in base64 so that no re-encoding of the outer object (a
// pretty-printer, a broker, a JSON library) changes what was signed.
// The body is JSON too:
//
//	{"format":"candec-campaign-1","version":7,"vehicles":"kart0[1-3]",
//	 "dbc":"sha256:…","not_before":"2026-12-04T21:00:00Z","policy":"<the policy file's text>"}
//
// The signed message is Context followed by the body, so that a
// signature made for anything else with the same key is never taken
// for a campaign's.
//
// # Checks
//
// Open checks, in order, what needs no trust (the size, the form, the
// key id, the signature); Check then the signed content against the car
// (its vehicle id, the applied version, the DBC hash, the time). Each
// refusal is a *Refusal carrying one Reason.
package campaign
