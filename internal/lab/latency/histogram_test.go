package latency

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBucketBounds(t *testing.T) {
	// Every value lies in its bucket: not above the bucket's highest
	// value, above the previous bucket's, and the bucket is narrow.
	values := []int64{0, 1, 127, 255, 256, 257, 511, 512, 1000, 1 << 20, 1<<20 + 1, 123456789, maxValue - 1, maxValue}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		values = append(values, r.Int64N(maxValue))
	}
	for _, v := range values {
		i := index(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("index(%d) = %d, want in [0, %d)", v, i, numBuckets)
		}
		hi := highest(i)
		if hi < v {
			t.Fatalf("highest(index(%d)) = %d, want >= %d", v, hi, v)
		}
		if i > 0 && highest(i-1) >= v {
			t.Fatalf("highest(index(%d)-1) = %d, want < %d", v, highest(i-1), v)
		}
		if float64(hi-v) > RelativeError*float64(v) {
			t.Fatalf("bucket of %d reaches %d: error %.5f, want <= %.5f", v, hi, float64(hi-v)/float64(v), RelativeError)
		}
	}
	if got := index(maxValue); got != numBuckets-1 {
		t.Errorf("index(maxValue) = %d, want %d", got, numBuckets-1)
	}
}

func TestQuantileExactBelow256(t *testing.T) {
	var h Histogram
	for v := int64(1); v <= 100; v++ {
		h.Record(v)
	}
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0, 1}, {0.01, 1}, {0.10, 10}, {0.5, 50}, {0.505, 51}, {0.99, 99}, {1, 100},
	}
	for _, tt := range tests {
		if got := h.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %d, want %d", tt.q, got, tt.want)
		}
	}
	if got, want := h.Mean(), time.Duration(51); got != want { // 50.5 rounds to 51
		t.Errorf("Mean() = %d, want %d", got, want)
	}
}

func TestQuantileBoundedError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var h Histogram
	var all []int64
	for range 200000 {
		// Log-normal-ish latencies between 10 µs and 2 s.
		v := int64(1e4 * (1 + r.ExpFloat64()*r.ExpFloat64()*50))
		if r.IntN(1000) == 0 {
			v = 2e9 - r.Int64N(1e6)
		}
		all = append(all, v)
		h.Record(v)
	}
	slices.Sort(all)
	for _, q := range []float64{0.1, 0.5, 0.9, 0.99, 0.999} {
		exact := all[int(q*float64(len(all))+0.999999)-1]
		got := int64(h.Quantile(q))
		if got < exact || float64(got-exact) > RelativeError*float64(exact) {
			t.Errorf("Quantile(%v) = %d, want in [%d, %d]", q, got, exact, exact+int64(RelativeError*float64(exact)))
		}
	}
	if got, want := int64(h.Max()), all[len(all)-1]; got != want {
		t.Errorf("Max() = %d, want %d", got, want)
	}
	if got, want := int64(h.Min()), all[0]; got != want {
		t.Errorf("Min() = %d, want %d", got, want)
	}
	if got, want := h.Count(), uint64(len(all)); got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
}

func TestQuantileClampedToMax(t *testing.T) {
	var h Histogram
	h.Record(1_000_001) // its bucket reaches above it
	if got, want := h.Quantile(0.5), time.Duration(1_000_001); got != want {
		t.Errorf("Quantile(0.5) of one sample = %d, want %d", got, want)
	}
}

func TestHugeAndNegative(t *testing.T) {
	var h Histogram
	h.Record(-5)
	h.Record(int64(time.Hour))
	if got, want := h.Negative(), uint64(1); got != want {
		t.Errorf("Negative() = %d, want %d", got, want)
	}
	if got, want := h.Min(), time.Duration(0); got != want {
		t.Errorf("Min() = %v, want %v", got, want)
	}
	if got, want := h.Max(), time.Hour; got != want {
		t.Errorf("Max() = %v, want %v", got, want)
	}
	if got, want := h.Quantile(0.99), time.Hour; got != want {
		t.Errorf("Quantile(0.99) = %v, want %v", got, want)
	}
}

func TestEmpty(t *testing.T) {
	var h Histogram
	if got := h.Quantile(0.5); got != 0 {
		t.Errorf("Quantile(0.5) of empty = %v, want 0", got)
	}
	if got, want := h.Summary(), (Summary{}); got != want {
		t.Errorf("Summary() of empty = %+v, want %+v", got, want)
	}
}

func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var a, b, all Histogram
	for i := range 5000 {
		v := r.Int64N(int64(50 * time.Millisecond))
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	if m != all {
		t.Fatalf("merge of two halves differs from recording all: got n=%d min=%d max=%d, want n=%d min=%d max=%d",
			m.n, m.min, m.max, all.n, all.min, all.max)
	}
	m.Reset()
	if m.Count() != 0 || m.Max() != 0 {
		t.Errorf("after Reset: Count() = %d, Max() = %v, want 0, 0", m.Count(), m.Max())
	}
}

func TestSummaryMillis(t *testing.T) {
	var h Histogram
	for _, v := range []time.Duration{4 * time.Millisecond, 5 * time.Millisecond, 6 * time.Millisecond, 40 * time.Millisecond} {
		h.Record(int64(v))
	}
	got := h.Summary()
	if got.N != 4 || got.Max != 40 {
		t.Errorf("Summary() = %+v, want N 4, Max 40", got)
	}
	if got.P50 < 5 || got.P50 > 5*(1+RelativeError) {
		t.Errorf("Summary().P50 = %v, want 5 ms (+0.8 %%)", got.P50)
	}
	if got.P99 != 40 {
		t.Errorf("Summary().P99 = %v, want 40", got.P99)
	}
}

func TestWriteHistogram(t *testing.T) {
	var h Histogram
	for range 90 {
		h.Record(int64(time.Millisecond))
	}
	for range 10 {
		h.Record(int64(11 * time.Millisecond))
	}
	var buf bytes.Buffer
	if err := h.WriteHistogram(&buf, 10); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("got %d rows, want 10:\n%s", len(lines), buf.String())
	}
	if want := "1.000 ms [90] |" + strings.Repeat("∎", barWidth); !strings.HasSuffix(lines[0], want) {
		t.Errorf("first row = %q, want suffix %q", lines[0], want)
	}
	if want := "10.000 ms [10] |" + strings.Repeat("∎", barWidth/9); !strings.HasSuffix(lines[9], want) {
		t.Errorf("last row = %q, want suffix %q", lines[9], want)
	}
	for _, l := range lines[1:9] {
		if !strings.Contains(l, "[0 ]") {
			t.Errorf("middle row = %q, want count 0", l)
		}
	}
}

func TestWriteDistribution(t *testing.T) {
	var h Histogram
	for v := int64(1); v <= 1000; v++ {
		h.Record(v * int64(time.Microsecond))
	}
	var buf bytes.Buffer
	if err := h.WriteDistribution(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"   10% in under 0.100 ms", "   50% in under 0.50", "99.9% in under 0.99", "   max 1.000 ms (1000 samples)"} {
		if !strings.Contains(out, want) {
			t.Errorf("distribution lacks %q:\n%s", want, out)
		}
	}
}

func TestRecordAllocs(t *testing.T) {
	h := new(Histogram)
	v := int64(12345)
	if n := testing.AllocsPerRun(1000, func() { h.Record(v); v += 997 }); n != 0 {
		t.Errorf("Record allocates %v times, want 0", n)
	}
}

func BenchmarkRecord(b *testing.B) {
	h := new(Histogram)
	b.ReportAllocs()
	v := int64(1)
	for b.Loop() {
		h.Record(v)
		v = (v*7 + 13) & (1<<33 - 1)
	}
}
