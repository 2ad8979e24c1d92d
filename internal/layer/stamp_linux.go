package layer

import (
	"os"
	"syscall"
)

func inodeAndCtime(fi os.FileInfo) (uint64, int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Ino, st.Ctim.Sec*1e9 + st.Ctim.Nsec, true
}
