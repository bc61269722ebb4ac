// Package decoder turns CAN frames into signal values using a compiled
// plan per message, writing into a caller-owned buffer without
// allocating.
package decoder
