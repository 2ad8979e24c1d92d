package imageref

import "sync"

// memo holds one value per key, made once per run: the first caller of a
// key makes it while later callers of that key wait for it and share its
// result, and callers of other keys go on at once. A failure is not
// remembered: the next caller of the key makes it again. The zero value
// is ready to use.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*made[V]
}

// made is one key's value; done is closed once v or err is set.
type made[V any] struct {
	done chan struct{}
	v    V
	err  error
}

// get returns k's value, calling fn to make it unless another caller has
// made it or is making it.
func (c *memo[K, V]) get(k K, fn func() (V, error)) (V, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[K]*made[V]{}
	}
	e, ok := c.m[k]
	if !ok {
		e = &made[V]{done: make(chan struct{})}
		c.m[k] = e
	}
	c.mu.Unlock()
	if ok {
		<-e.done
		return e.v, e.err
	}
	e.v, e.err = fn()
	if e.err != nil {
		c.mu.Lock()
		delete(c.m, k)
		c.mu.Unlock()
	}
	close(e.done)
	return e.v, e.err
}

// forget drops k's value when it is made and stale says it is, so the
// next get makes it again; a value still being made is left alone.
func (c *memo[K, V]) forget(k K, stale func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		return
	}
	select {
	case <-e.done: // v is set and no longer written
	default:
		return
	}
	if stale(e.v) {
		delete(c.m, k)
	}
}
