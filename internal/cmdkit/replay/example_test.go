package replay_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/rawbatch"
)

// Play a capture one frame per batch, as fast as the publisher takes
// them; a real publisher sends each batch to the broker's raw topic
// (mqttclient.NewPublisher).
func ExampleRun() {
	const log = `(1700000000.000000) can0 0A0#0102
(1700000000.010000) can0 0B0#03
(1700000000.020000) can0 0A0#0405
`
	open := func() (capture.Source, error) {
		return capture.NewSource(strings.NewReader(log), capture.Options{})
	}
	pub := replay.PublisherFunc(func(_ context.Context, b []byte) error {
		batch, err := rawbatch.Parse(b)
		if err != nil {
			return err
		}
		fmt.Printf("batch seq %d, %d frame(s)\n", batch.Seq(), batch.Len())
		return nil
	})
	st, err := replay.Run(context.Background(), open, pub, replay.Options{Flood: true, PerFrame: true})
	if err != nil {
		fmt.Println(err)
	}
	fmt.Printf("%d frames in %d batches, next seq %d\n", st.Frames, st.Batches, st.NextSeq)
	// Output:
	// batch seq 0, 1 frame(s)
	// batch seq 1, 1 frame(s)
	// batch seq 2, 1 frame(s)
	// 3 frames in 3 batches, next seq 3
}
