// Command adversary is an image program that tries to get out of the
// sandbox, for the sandbox and verify tests. Its name (argv[0]'s base)
// chooses what it tries; the targets come from its environment:
//
//	write-host-file  create $HOST_FILE (with its directories)
//	read-canary      print the contents of $CANARY_FILE
//	dial-host        connect to $DIAL_ADDR over TCP
//	fork-bomb        fork without end
//	print-forever    write to stdout without end
//	sleep-forever    say so, then never end
//	inspect          print what it sees of its surroundings, one key=value a line
//	print-env        print its environment on one line
//	fork-memory      fork 50 children that each write 100 MiB and hold it
//	sys-CALL         make one system call the seccomp filter refuses (syscalls.go)
//
// Each attempt that ends exits 1 with a line that says what happened.
// Under any other name, `--version` prints an OS/Arch line.
package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	name := filepath.Base(os.Args[0])
	switch name {
	case "write-host-file":
		p := os.Getenv("HOST_FILE")
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.WriteFile(p, []byte("escaped\n"), 0o644)
		}
		end(name, "write "+p, err)
	case "read-canary":
		b, err := os.ReadFile(os.Getenv("CANARY_FILE"))
		if err == nil {
			fmt.Printf("%s: read the canary: %s\n", name, b)
			os.Exit(1)
		}
		end(name, "read canary", err)
	case "dial-host":
		c, err := net.DialTimeout("tcp", os.Getenv("DIAL_ADDR"), 10*time.Second)
		if err == nil {
			c.Close()
		}
		end(name, "dial "+os.Getenv("DIAL_ADDR"), err)
	case "fork-bomb":
		forkBomb()
	case "print-forever":
		line := []byte(strings.Repeat("y", 79) + "\n")
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				os.Exit(1)
			}
		}
	case "sleep-forever":
		fmt.Println("sleep-forever: sleeping")
		for {
			time.Sleep(time.Hour)
		}
	case "inspect":
		inspect()
	case "print-env":
		fmt.Println(strings.Join(os.Environ(), " "))
	case "fork-memory":
		forkMemory()
	default:
		if strings.HasPrefix(name, "sys-") {
			deniedCall(name)
		}
		if len(os.Args) > 1 && os.Args[1] == "--version" {
			fmt.Printf("Version:      0.0.0-test\nOS/Arch:      %s/%s\n", runtime.GOOS, runtime.GOARCH)
		}
	}
}

// end reports an attempt's outcome and exits 1 either way.
func end(name, what string, err error) {
	if err != nil {
		fmt.Printf("%s: %s: %v\n", name, what, err)
	} else {
		fmt.Printf("%s: %s: done\n", name, what)
	}
	os.Exit(1)
}

// forkBomb forks with raw clone calls, parent and children alike, without
// end; after a refused fork it waits 10ms, so a bounded sandbox idles.
// Only raw system calls run after the first fork: the Go runtime is not
// safe to use in a child of a raw fork.
func forkBomb() {
	msg := []byte("fork-bomb: fork refused\n")
	ts := syscall.Timespec{Nsec: 10_000_000}
	said := false
	for {
		_, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			if !said {
				syscall.RawSyscall(syscall.SYS_WRITE, 1, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)))
				said = true
			}
			syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
	}
}

// inspect prints one key=value line per fact the sandbox tests check.
func inspect() {
	kv := func(k string, v any) { fmt.Printf("%s=%v\n", k, v) }
	kv("fds", strings.Join(openFDs(), ",")) // first: nothing of ours is open yet
	kv("uid", os.Getuid())
	kv("gid", os.Getgid())
	groups, _ := os.Getgroups()
	kv("groups", groups)
	kv("uid_map", strings.Join(strings.Fields(readFile("/proc/self/uid_map")), " "))
	host, _ := os.Hostname()
	kv("hostname", host)
	var ifaces []string
	ifs, err := net.Interfaces()
	if err != nil {
		ifaces = append(ifaces, err.Error())
	}
	for _, i := range ifs {
		ifaces = append(ifaces, fmt.Sprintf("%s(%v)", i.Name, i.Flags&net.FlagUp != 0))
	}
	kv("interfaces", strings.Join(ifaces, ","))
	kv("pid", os.Getpid())
	kv("processes", len(numeric("/proc")))
	kv("env", strings.Join(os.Environ(), ","))
	for _, l := range []struct {
		name string
		res  int
	}{{"cpu", 0}, {"fsize", 1}, {"nproc", 6}, {"nofile", 7}, {"as", 9}} {
		var r syscall.Rlimit
		_ = syscall.Getrlimit(l.res, &r)
		kv("rlimit_"+l.name, r.Cur)
	}
	for _, line := range strings.Split(readFile("/proc/self/status"), "\n") {
		if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
			kv("no_new_privs", strings.TrimSpace(v))
		}
		for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
			if v, ok := strings.CutPrefix(line, c+":"); ok {
				kv(strings.ToLower(c), strings.TrimSpace(v))
			}
		}
	}
	inspectFiles(kv)
	kv("argv", strings.Join(os.Args, " "))
	emulator := "none"
	for _, line := range strings.Split(readFile("/proc/self/mountinfo"), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/dev/.helperbuild-emulator" {
			emulator = f[5]
		}
	}
	kv("emulator_mount", emulator)
	memCgroup := ""
	for _, line := range strings.Split(readFile("/proc/self/cgroup"), "\n") {
		// v1's memory hierarchy, else the unified one.
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && (strings.Contains(","+f[1]+",", ",memory,") || (f[0] == "0" && memCgroup == "")) {
			memCgroup = f[2]
		}
	}
	kv("memory_cgroup", memCgroup)
	for _, line := range strings.Split(readFile("/proc/self/status"), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			kv("seccomp", strings.TrimSpace(v))
		}
	}
}

// inspectFiles prints what the program may read and write: the working
// directory, the root and /tmp, /dev/null and the paths WRITE_PATHS and
// READ_PATHS name.
func inspectFiles(kv func(string, any)) {
	wd, _ := os.Getwd()
	kv("cwd", wd)
	_, err := os.Stat("/etc/left-by-last-run")
	kv("left_by_last_run", err == nil)
	kv("write_root", errString(os.WriteFile("/etc/left-by-last-run", []byte("x"), 0o644)))
	kv("write_tmp", errString(os.WriteFile("/tmp/x", []byte("x"), 0o644)))
	null, err := os.OpenFile("/dev/null", os.O_WRONLY, 0)
	if err == nil {
		_, err = null.Write([]byte("x"))
		null.Close()
	}
	kv("dev_null", errString(err))
	for _, p := range strings.FieldsFunc(os.Getenv("WRITE_PATHS"), func(r rune) bool { return r == ',' }) {
		kv("write:"+p, errString(os.WriteFile(p, []byte("x"), 0o644)))
	}
	for _, p := range strings.FieldsFunc(os.Getenv("READ_PATHS"), func(r rune) bool { return r == ',' }) {
		b, err := os.ReadFile(p)
		kv("read:"+p, string(b)+errString(err))
	}
}

// openFDs lists the open descriptors below 1024 without opening one.
func openFDs() []string {
	var out []string
	for fd := 0; fd < 1024; fd++ {
		if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); e == 0 {
			out = append(out, fmt.Sprint(fd))
		}
	}
	return out
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// numeric lists the entries of dir whose names are numbers.
func numeric(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if strings.Trim(e.Name(), "0123456789") == "" {
			out = append(out, e.Name())
		}
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
