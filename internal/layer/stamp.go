package layer

import (
	"os"
	"strings"
)

// blobStamp is a cached blob file as it was when its bytes were last known
// to hash to its digest: this boot, this file (inode), this size, these
// times. A blob whose stamp still matches is handed out without hashing
// it again. A crash, which can leave an unsynced blob short or zeroed,
// starts another boot; a rewrite changes the inode or the change time,
// which no program can set back.
type blobStamp struct {
	Boot  string `json:"boot"`
	Inode uint64 `json:"inode"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"` // ns
	Ctime int64  `json:"ctime"` // ns
}

// stampOf returns the stamp of the file at path, or ok false where there is
// no boot ID or no inode and change time to read (then every hit hashes).
func stampOf(path string) (blobStamp, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return blobStamp{}, false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return blobStamp{}, false
	}
	ino, ctime, ok := inodeAndCtime(fi)
	if !ok {
		return blobStamp{}, false
	}
	id := strings.TrimSpace(string(boot))
	if id == "" {
		return blobStamp{}, false
	}
	return blobStamp{Boot: id, Inode: ino, Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Ctime: ctime}, true
}
