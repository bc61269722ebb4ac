package pipeline

// The window stream: every envelope published during one window of
// frame time, in one message on one topic.

// windowAt makes the open window the one holding engine time at,
// sending the previous one if it has items.
func (e *Engine) windowAt(at int64) {
	if at < e.winEnd {
		return
	}
	if e.win.Len() > 0 {
		e.sendWindow()
	}
	start := at - at%e.winPeriod
	if at%e.winPeriod < 0 {
		start -= e.winPeriod
	}
	e.win.Reset(start, start+e.winPeriod)
	e.winEnd = start + e.winPeriod
}

// closeWindow sends the open window once e.now has reached its end.
func (e *Engine) closeWindow() {
	if e.win != nil && e.now >= e.winEnd && e.win.Len() > 0 {
		e.sendWindow()
	}
}

func (e *Engine) sendWindow() {
	e.winSeq++
	e.winBuf = e.win.Append(e.winBuf[:0], e.winSeq, e.cfg.Epoch)
	e.stats.Envelopes[KindWindow]++
	e.winOut = Out{Topic: e.winTopic, Payload: e.winBuf, Stream: -1, Seq: e.winSeq, TS: e.win.Start(), Kind: KindWindow}
	e.win.Reset(e.win.Start(), e.win.End())
	e.sink.Publish(&e.winOut)
}

// SetPolicyVersion sets the campaign version the window stream's
// windows carry from now on (envelope.Window.Policy; 0 for none): the
// open window, when it holds envelopes, is sent first with the version
// they were published under, so that every window names the one
// version its envelopes had. The next envelopes of the same period go
// in a window message of their own, with the same start and end and
// the next seq. Call it on the goroutine that calls Frame, before
// SetPolicies, as the service does for a campaign.
func (e *Engine) SetPolicyVersion(version uint64) {
	if e.policyVersion == version {
		return
	}
	e.policyVersion = version
	if e.win == nil {
		return
	}
	if e.win.Len() > 0 {
		e.sendWindow()
	}
	e.win.SetPolicy(version)
}

// PolicyVersion returns the version SetPolicyVersion set last (0 at
// New).
func (e *Engine) PolicyVersion() uint64 { return e.policyVersion }
