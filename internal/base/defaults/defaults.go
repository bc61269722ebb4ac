package defaults

// Number is what Positive takes: the integers, floats and durations of a
// Config.
type Number interface {
	~int | ~int64 | ~float64
}

// Positive returns v when it is more than zero, else def.
func Positive[T Number](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
