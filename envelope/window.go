package envelope

// Window is one message of the window stream: every envelope published
// during one window of frame time, with the window's own seq.
//
// JSON form (items are [topic, envelope] pairs, in publish order):
//
//	{"seq":7,"epoch":1760000000000000000,"start":1760000000010000000,"end":1760000000020000000,
//	 "items":[["yukart/vehicle/MotorSpeed",{"value":1510,"unit":"rpm",...}],...]}
//
// The MessagePack form is a map with the same keys.
type Window struct {
	// Seq rises by exactly 1 per window message, starting at 1 in each
	// epoch; empty windows are not sent and take no seq.
	Seq uint64
	// Epoch is the publisher's restart id, as in envelopes.
	Epoch uint64
	// Start and End bound the window in frame time (ns since the Unix
	// epoch): it holds the envelopes published at Start <= t < End.
	Start, End int64
	// Policy is the version of the campaign whose policy published
	// every envelope of the window; 0 (key "policy" absent) when none
	// did: the publisher ran its policy file or the built-in policy.
	Policy uint64
	// Items are the window's envelopes in publish order. ParseWindow
	// reuses the slice and each item's scratch space.
	Items []WindowItem
}

// WindowItem is one envelope of a window and the topic it was
// published on.
type WindowItem struct {
	// Topic points into the parsed payload (or the item's scratch
	// space); copy it to keep it.
	Topic    []byte
	Envelope Envelope
}

// WindowEncoder builds one window message from envelopes as they are
// published. It reuses its buffers: no allocations once they have grown.
// The zero value encodes JSON.
type WindowEncoder struct {
	enc        Encoding
	start, end int64
	policy     uint64
	n          int
	items      []byte
}

// NewWindowEncoder returns an encoder for enc.
func NewWindowEncoder(enc Encoding) *WindowEncoder { return &WindowEncoder{enc: enc} }

// Reset starts a new window [start, end) and drops any items.
func (w *WindowEncoder) Reset(start, end int64) {
	w.start, w.end, w.n, w.items = start, end, 0, w.items[:0]
}

// Add appends one envelope published on topic.
func (w *WindowEncoder) Add(topic string, e *Envelope) {
	w.openItem(topic)
	w.items = Append(w.enc, w.items, e)
	w.closeItem()
}

// AddEncoded appends one envelope already encoded in the window's
// encoding (as published on its own topic), without encoding it again.
func (w *WindowEncoder) AddEncoded(topic string, payload []byte) {
	w.openItem(topic)
	w.items = append(w.items, payload...)
	w.closeItem()
}

// openItem opens a [topic, envelope] pair.
func (w *WindowEncoder) openItem(topic string) {
	if w.enc == Msgpack {
		w.items = append(w.items, 0x92)
		w.items = appendMsgpackStr(w.items, topic)
		return
	}
	if w.n > 0 {
		w.items = append(w.items, ',')
	}
	w.items = append(w.items, '[')
	w.items = AppendJSONString(w.items, topic)
	w.items = append(w.items, ',')
}

// closeItem closes the pair opened by openItem.
func (w *WindowEncoder) closeItem() {
	if w.enc == JSON {
		w.items = append(w.items, ']')
	}
	w.n++
}

// SetPolicy sets the policy version the windows carry from the next
// Append on (Window.Policy); 0 leaves the key out.
func (w *WindowEncoder) SetPolicy(version uint64) { w.policy = version }

// Policy returns the policy version the windows carry.
func (w *WindowEncoder) Policy() uint64 { return w.policy }

// Len returns the number of envelopes added since Reset.
func (w *WindowEncoder) Len() int { return w.n }

// Start returns the current window's start.
func (w *WindowEncoder) Start() int64 { return w.start }

// End returns the current window's end.
func (w *WindowEncoder) End() int64 { return w.end }

// Append appends the finished window message with the given seq and
// epoch to dst. The window stays as it is until Reset.
func (w *WindowEncoder) Append(dst []byte, seq, epoch uint64) []byte {
	if w.enc == Msgpack {
		if w.policy != 0 {
			dst = append(dst, 0x86)
		} else {
			dst = append(dst, 0x85)
		}
		dst = append(dst, 0xa3, 's', 'e', 'q')
		dst = appendMsgpackUint(dst, seq)
		dst = append(dst, 0xa5, 'e', 'p', 'o', 'c', 'h')
		dst = appendMsgpackUint(dst, epoch)
		dst = append(dst, 0xa5, 's', 't', 'a', 'r', 't')
		dst = appendMsgpackInt(dst, w.start)
		dst = append(dst, 0xa3, 'e', 'n', 'd')
		dst = appendMsgpackInt(dst, w.end)
		if w.policy != 0 {
			dst = append(dst, 0xa6, 'p', 'o', 'l', 'i', 'c', 'y')
			dst = appendMsgpackUint(dst, w.policy)
		}
		dst = append(dst, 0xa5, 'i', 't', 'e', 'm', 's')
		dst = appendMsgpackArrayHeader(dst, w.n)
		return append(dst, w.items...)
	}
	dst = append(dst, `{"seq":`...)
	dst = appendUintJSON(dst, seq)
	dst = append(dst, `,"epoch":`...)
	dst = appendUintJSON(dst, epoch)
	dst = append(dst, `,"start":`...)
	dst = appendIntJSON(dst, w.start)
	dst = append(dst, `,"end":`...)
	dst = appendIntJSON(dst, w.end)
	if w.policy != 0 {
		dst = append(dst, `,"policy":`...)
		dst = appendUintJSON(dst, w.policy)
	}
	dst = append(dst, `,"items":[`...)
	dst = append(dst, w.items...)
	return append(dst, "]}"...)
}
