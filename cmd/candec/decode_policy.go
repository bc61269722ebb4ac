package main

import (
	"context"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/decodejob"
)

// policyOptions are the settings of decode --policy besides the policy
// file; the zero value is what the service does by default.
type policyOptions = decodejob.PolicyOptions

// decodeWithPolicy runs the frames of src through the publishing policy
// at policyPath ("" for the built-in one) to e.stdout, with its summary
// on e.stderr (decodejob.RunPolicy), and gives a mistake in the options
// exit status 2.
func decodeWithPolicy(ctx context.Context, e env, db *dbc.Database, policyPath string, src capture.Source, opts policyOptions) error {
	return decodeStatus(decodejob.RunPolicy(ctx, e.stdout, e.stderr, db, policyPath, src, opts))
}
