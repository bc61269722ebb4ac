package pipeline

// The timer heap: a binary min-heap of timers, with each timer's
// position kept in hpos, by timer id, for decrease-key. hpos is a slice
// of its own, not a field of the states, so that sifting touches two
// dense arrays.

func (e *Engine) heapSwap(i, j int) {
	h := e.heap
	h[i], h[j] = h[j], h[i]
	e.hpos[h[i].id] = int32(i)
	e.hpos[h[j].id] = int32(j)
}

func (e *Engine) heapPush(t timer) {
	e.heap = append(e.heap, t)
	n := len(e.heap) - 1
	e.hpos[t.id] = int32(n)
	e.heapUp(n)
}

func (e *Engine) heapPop() {
	n := len(e.heap) - 1
	e.heapSwap(0, n)
	e.hpos[e.heap[n].id] = -1
	e.heap = e.heap[:n]
	if n > 0 {
		e.heapDown(0)
	}
}

func (e *Engine) heapUp(i int) {
	h := e.heap
	for i > 0 {
		p := (i - 1) / 2
		if h[i].wake >= h[p].wake {
			return
		}
		e.heapSwap(i, p)
		i = p
	}
}

func (e *Engine) heapDown(i int) {
	h := e.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].wake < h[l].wake {
			m = r
		}
		if h[m].wake >= h[i].wake {
			return
		}
		e.heapSwap(i, m)
		i = m
	}
}
