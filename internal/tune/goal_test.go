package tune

import (
	"context"
	"testing"

	"github.com/yukart/candec/internal/testkit/realdata"
)

// TestGoalUniformCaps: on each real capture (the RAV4's two buses, the
// three drives of other makes), at the cost of the uniform 5 Hz and 1 Hz
// caps the optimized plan meets the budget, has at most half the cap's
// total error, loses no enum transition, and the file written, reported
// on with --policy, gives the same figures. Every budget that some
// uniform cap meets is met (all seven caps, unless -short).
func TestGoalUniformCaps(t *testing.T) {
	dir := realdata.Dir(t)
	for _, c := range realCaptures {
		t.Run(c.name(), func(t *testing.T) {
			db, rec := c.load(t, dir)
			cfg := Config{DB: db, TopicTemplate: "car/{message}/{signal}"}
			free, err := Optimize(context.Background(), []*Recording{rec}, OptimizeConfig{Config: cfg, Budget: 1e9})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range free.Uniform {
				goalCap := u.Name == "cap 5 Hz" || u.Name == "cap 1 Hz"
				if !goalCap && testing.Short() {
					continue
				}
				plan, err := Optimize(context.Background(), []*Recording{rec}, OptimizeConfig{Config: cfg, Budget: u.Deliveries})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %.4g at %.1f; optimized %.4g at %.1f, %d enum transitions missed",
					u.Name, u.Error, u.Deliveries, plan.TotalError, plan.Worst, plan.MissedEnum)
				if !plan.Met || plan.Worst > u.Deliveries*(1+1e-9) {
					t.Errorf("%s's cost %.2f: not met (%.2f)", u.Name, u.Deliveries, plan.Worst)
				}
				if !goalCap {
					continue
				}
				if plan.TotalError > u.Error/2 || plan.MissedEnum != 0 {
					t.Errorf("%s's cost: error %.4g (want ≤ half the cap's %.4g), %d enum transitions missed (want 0)",
						u.Name, plan.TotalError, u.Error, plan.MissedEnum)
				}
				pol := mustPolicy(t, string(plan.PolicyYAML(db)))
				cfg := cfg
				cfg.Policy = pol
				rep, err := AnalyzeRecording(rec, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !close(rep.DeliveriesPerS, plan.Worst) || !close(rep.TotalError, plan.TotalError) || rep.MissedEnum != plan.MissedEnum {
					t.Errorf("%s's cost: the file written reports %.6f deliveries/s, error %.9g, %d missed; the plan said %.6f, %.9g, %d",
						u.Name, rep.DeliveriesPerS, rep.TotalError, rep.MissedEnum, plan.Worst, plan.TotalError, plan.MissedEnum)
				}
			}
		})
	}
}
