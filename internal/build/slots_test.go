package build

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSlotsGiveCompilesTheCoresFirst(t *testing.T) {
	s := newSlots(2, 1)
	assert.Equal(t, 1, s.threads(), "one goroutine per layer while a compile runs")
	assert.True(t, s.acquire(), "the slot the one compile leaves free, while it runs")
	s.compiled()
	assert.Equal(t, 2, s.threads(), "every slot once nothing compiles")
	assert.False(t, s.acquire(), "the second slot, after the last compile")
	s.release()
	s.release()
	assert.Equal(t, 8, newSlots(16, 0).threads(), "at most maxLayerThreads")
}

func TestSlotsWakeAWaiterWhenCompilingEnds(t *testing.T) {
	for _, end := range []struct {
		name string
		do   func(*slots)
	}{
		{"last compile", (*slots).compiled},
		{"build ended", (*slots).compilesEnded},
	} {
		t.Run(end.name, func(t *testing.T) {
			s := newSlots(1, 1) // the one slot belongs to the compile
			got := make(chan bool)
			go func() { got <- s.acquire() }()
			end.do(s)
			assert.False(t, <-got, "the waiter runs once nothing compiles")
			s.release()
		})
	}
}
