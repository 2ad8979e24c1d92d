package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Descendants lists the processes below pid (children, their children...),
// read from /proc, as "PID COMMAND".
func Descendants(pid int) []string {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	comm := map[int]string{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		comm[p] = s[open+1 : end]
	}
	var out []string
	for p := range parent {
		for q, n := parent[p], 0; q > 0 && n < 64; q, n = parent[q], n+1 {
			if q == pid {
				out = append(out, fmt.Sprintf("%d %s", p, comm[p]))
				break
			}
		}
	}
	return out
}
