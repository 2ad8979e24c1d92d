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
	return uint64(st.Ino), int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec), true
}
