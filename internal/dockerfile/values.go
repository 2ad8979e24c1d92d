package dockerfile

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"strings"

	"github.com/helperbuild/helperbuild/internal/rootfs"
)

// parseOwner parses --chown (and USER, for directories WORKDIR creates):
// uid[:gid] with numeric ids, "root" for 0. A missing gid is the uid, as in
// Docker. "" is 0:0.
func parseOwner(s string) (uid, gid int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	user, group, hasGroup := strings.Cut(s, ":")
	if uid, err = parseID(user); err != nil {
		return 0, 0, err
	}
	gid = uid
	if hasGroup {
		if gid, err = parseID(group); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

func parseID(s string) (int, error) {
	if s == "root" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		if s == "" || strings.Trim(s, "0123456789") == "" {
			return 0, fmt.Errorf("%q is not a valid uid or gid (0 to 2147483647)", s)
		}
		return 0, fmt.Errorf("user and group names (%q) need the base image's /etc/passwd and /etc/group, "+
			"which helperbuild does not read; use numeric uid[:gid]", s)
	}
	return int(n), nil
}

// parseChmod parses --chmod: octal, at most 07777. "" means none (nil).
func parseChmod(s string) (*fs.FileMode, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o7777 {
		return nil, fmt.Errorf("invalid chmod parameter %q: it should be an octal number between 0 and 07777 "+
			"(symbolic modes such as u+x are not supported)", s)
	}
	m := rootfs.FileMode(int64(n))
	return &m, nil
}

// linuxSignals are the names moby/sys/signal accepts on Linux, without "SIG".
var linuxSignals = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields("ABRT ALRM BUS CHLD CLD CONT FPE HUP ILL INT IO IOT KILL PIPE POLL PROF PWR QUIT " +
		"SEGV STKFLT STOP SYS TERM TRAP TSTP TTIN TTOU URG USR1 USR2 VTALRM WINCH XCPU XFSZ RTMIN RTMAX") {
		m[s] = true
	}
	for i := 1; i <= 15; i++ {
		m["RTMIN+"+strconv.Itoa(i)] = true
	}
	for i := 1; i <= 14; i++ {
		m["RTMAX-"+strconv.Itoa(i)] = true
	}
	return m
}()

// checkSignal accepts what Docker's STOPSIGNAL accepts for Linux: a signal
// number 1 to 64 or a name, with or without "SIG", any case.
func checkSignal(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return fmt.Errorf("STOPSIGNAL %s: invalid signal number (1 to 64)", s)
		}
		return nil
	}
	if !linuxSignals[strings.TrimPrefix(strings.ToUpper(s), "SIG")] {
		return fmt.Errorf("STOPSIGNAL %s: invalid signal; use a name such as SIGTERM or a number", s)
	}
	return nil
}

// parsePort turns an EXPOSE argument ([ip:][hostPort:]port[-end][/proto])
// into "port/proto" items, as BuildKit's parsePort.
func parsePort(raw string) ([]string, error) {
	ip, hostPort, containerPort := splitPortParts(raw)
	port, proto, _ := strings.Cut(containerPort, "/")
	if port == "" {
		return nil, errors.New("no port specified")
	}
	switch strings.ToLower(proto) {
	case "":
		proto = "tcp"
	case "tcp", "udp", "sctp":
	default:
		return nil, fmt.Errorf("invalid proto: %s", proto)
	}
	if ip != "" && ip[0] == '[' {
		rawIP, _, err := net.SplitHostPort(ip + ":")
		if err != nil {
			return nil, fmt.Errorf("invalid IP address %v", ip)
		}
		ip = rawIP
	}
	if ip != "" && net.ParseIP(ip) == nil {
		return nil, fmt.Errorf("invalid IP address: %s", ip)
	}
	start, end, err := parsePortRange(port)
	if err != nil {
		return nil, fmt.Errorf("invalid containerPort: %s", port)
	}
	if hostPort != "" {
		hs, he, err := parsePortRange(hostPort)
		if err != nil {
			return nil, fmt.Errorf("invalid hostPort: %s", hostPort)
		}
		if end-start != he-hs && end != start {
			return nil, fmt.Errorf("invalid ranges specified for container and host Ports: %s and %s", port, hostPort)
		}
	}
	out := make([]string, 0, end-start+1)
	for p := start; p <= end; p++ {
		out = append(out, strconv.Itoa(p)+"/"+strings.ToLower(proto))
	}
	return out, nil
}

func splitPortParts(raw string) (ip, hostPort, containerPort string) {
	parts := strings.Split(raw, ":")
	switch n := len(parts); n {
	case 1:
		return "", "", parts[0]
	case 2:
		return "", parts[0], parts[1]
	default:
		return strings.Join(parts[:n-2], ":"), parts[n-2], parts[n-1]
	}
}

func parsePortRange(s string) (int, int, error) {
	start, end, isRange := strings.Cut(s, "-")
	a, err := parsePortNumber(start)
	if err != nil {
		return 0, 0, err
	}
	if !isRange || start == end {
		return a, a, nil
	}
	b, err := parsePortNumber(end)
	if err != nil {
		return 0, 0, err
	}
	if b < a {
		return 0, 0, fmt.Errorf("invalid port range: %s", s)
	}
	return a, b, nil
}

func parsePortNumber(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("invalid port %q (0 to 65535)", s)
	}
	return int(n), nil
}
