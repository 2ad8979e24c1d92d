// Command pgrep is the pgrep of the test bases (Debian's busybox-static has
// no pgrep applet, procps' needs eight libraries): "pgrep [-f] PATTERN"
// prints the PIDs of the processes whose name (with -f: whole command line)
// matches the extended regular expression, itself excepted; exit status 0
// when one matched, 1 when none did, 2 for usage errors, as procps'.
package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

func main() {
	args := os.Args[1:]
	full := false
	if len(args) > 0 && args[0] == "-f" {
		full, args = true, args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: pgrep [-f] PATTERN")
		os.Exit(2)
	}
	re, err := regexp.Compile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgrep:", err)
		os.Exit(2)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgrep:", err)
		os.Exit(3)
	}
	self, found := os.Getpid(), false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		what := "comm"
		if full {
			what = "cmdline"
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/" + what)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		if re.MatchString(s) {
			fmt.Println(pid)
			found = true
		}
	}
	if !found {
		os.Exit(1)
	}
}
