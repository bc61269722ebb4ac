package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/benchmarks/fleet"
	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/base/readfile"
	"github.com/yukart/candec/internal/cmdkit/cli"
)

// benchCampaign reads bench's --campaign, --campaign-key and
// --campaign-at for a fleet run of the measured window duration after
// warmup, and checks up front what each car will check when the
// campaign comes (so that a run is not spent on a campaign every car
// refuses): its signature with the key, that it is for one of the cars
// at least, their DBC and its not_before at the push. nil without
// --campaign.
func benchCampaign(ctx context.Context, f fleetFlags, duration, warmup time.Duration) (*fleet.Campaign, *campaign.Campaign, error) {
	if *f.campaign == "" {
		return nil, nil, nil
	}
	at, err := campaignAt(*f.campaignAt, duration)
	if err != nil {
		return nil, nil, err
	}
	payload, err := readfile.Read(ctx, *f.campaign, campaign.MaxSize)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: --campaign: %w", err)
	}
	kb, err := readfile.Read(ctx, *f.campaignKey, campaign.MaxKeyFileSize)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: --campaign-key: %w", err)
	}
	pub, err := campaign.ParsePublicKey(kb)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: --campaign-key %s: %w", *f.campaignKey, err)
	}
	files, err := fleetDBCFiles(*f.dbc)
	if err != nil {
		return nil, nil, err
	}
	hash, err := files.Hash(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: --fleet-dbc: %w", err)
	}
	camp, err := campaign.Open(payload, pub)
	if err == nil {
		err = checkForCars(camp, *f.cars, hash, time.Now().Add(warmup+at))
	}
	if err != nil {
		return nil, nil, cli.Exit(2, fmt.Errorf("bench: --campaign %s: the cars would refuse it: %w", *f.campaign, err))
	}
	return &fleet.Campaign{Payload: payload, Key: pub, DBC: hash, At: at}, camp, nil
}

// checkForCars checks camp against the first of n cars it is for, as
// that car will at push.
func checkForCars(camp *campaign.Campaign, n int, dbcHash string, push time.Time) error {
	for i := range n {
		if id := fleet.CarID(i); camp.For(id) {
			return camp.Check(campaign.Car{Vehicle: id, DBC: dbcHash}, push)
		}
	}
	return fmt.Errorf("it is for vehicles %q, which none of the %d cars (%s to %s) is", camp.Vehicles, n, fleet.CarID(0), fleet.CarID(n-1))
}

// campaignAt reads --campaign-at: a share of the measured window
// ("50%") or a duration into it, strictly inside it.
func campaignAt(v string, duration time.Duration) (time.Duration, error) {
	var at time.Duration
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		p, err := strconv.ParseFloat(pct, 64)
		if err != nil || p != p {
			return 0, badFlag("bench", "campaign-at", v, "a share of --duration (50%) or a duration into it (10s)")
		}
		at = time.Duration(p / 100 * float64(duration))
	} else {
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, badFlag("bench", "campaign-at", v, "a share of --duration (50%) or a duration into it (10s)")
		}
		at = d
	}
	if at <= 0 || at >= duration {
		return 0, badFlag("bench", "campaign-at", v, fmt.Sprintf("inside the measured window (--duration %v)", duration))
	}
	return at, nil
}

// liveCars says which cars' drives are made live, and from where: those
// the campaign is for, from up to a second before the push (after the
// warm-up). None without a campaign.
func liveCars(camp *campaign.Campaign, cc *fleet.Campaign, warmup time.Duration) (func(id string) bool, time.Duration) {
	if camp == nil {
		return nil, 0
	}
	push := warmup + cc.At
	return camp.For, push - min(time.Second, push/2)
}
