#!/bin/bash
# As root, cgroup v2, in a directory on ext4/xfs/btrfs ($DIR).
cg=/sys/fs/cgroup/wbmini
mkdir $cg && echo +memory > $cg/cgroup.subtree_control
echo 4G > $cg/memory.max
mkdir $cg/old $cg/new
append() {  # append $1 blocks of $2 to each of 1000 files
	for i in $(seq 1000); do
		dd if=/dev/zero of=$DIR/f$i bs=$2 count=$1 \
		   oflag=append conv=notrunc status=none
	done
}
(echo $BASHPID > $cg/old/cgroup.procs
 append 8 1M            # old owner writes the files...
 append 1 64k)          # ...and exits with all of them dirty
rmdir $cg/old           # its cgroup goes away while they are dirty
bpftrace -e 'kretprobe:cgroup_writeback_by_id {
	@ret[(int32)retval] = count(); }' &
sleep 3
time (echo $BASHPID > $cg/new/cgroup.procs
      append 4 1M)      # replacement keeps appending to the same files
kill -INT $!; wait
rmdir $cg/new $cg
# Unpatched: many @ret[-2] (-ENOENT) and the append stalls.
# Patched: @ret[0] only.
