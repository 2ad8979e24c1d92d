package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag holding a size in bytes, written as a whole number
// with an optional binary unit: 4GiB, 512MiB, 4G, 1048576.
type byteSize int64

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}}

func (s *byteSize) Set(v string) error {
	num := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(v), "B"), "i")
	shift := uint(0)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(strings.ToUpper(num), u.suffix); ok {
			num, shift = rest, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return fmt.Errorf("%q is not a size: want a positive number of bytes with an optional unit, e.g. 4GiB or 512MiB", v)
	}
	*s = byteSize(n << shift)
	return nil
}

func (s *byteSize) String() string {
	n := int64(*s)
	for _, u := range sizeUnits {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix + "iB"
		}
	}
	return strconv.FormatInt(n, 10)
}

func (s *byteSize) Type() string { return "size" }
