"""Where Conch's time goes in `cargo xtask bench real`, per tool, from its trace log.

Run the bench with the servers' standard error kept and Conch's DevTools traffic traced:

    CONCH_BENCH_STDERR=/tmp/bench.log RUST_LOG=conch_cdp::wire=trace,conch_tools=debug \
        CONCH_BENCH_REAL_RUNS=1 cargo xtask bench real
    python3 xtask/bench/real/phases.py /tmp/bench.log

Each call (the warm-up open of each server left out) is cut at its first act sent to the
page (a navigation, a press, a key, typed text) and at Conch's first read of the page after
it: `pre` is Conch's work before the act, `act+wait` the act and the page settling, `read`
the snapshot or diff and the answer (the settle's own scripts, which name `__conchSettle`,
are the wait's, not a read). Calls whose act loaded a document also show the time
from the act to the load event (the page's own) and from the load to the read (Conch's).
A new document's first read installs the reader in the same evaluation as the snapshot;
that evaluation counts as the read. The trace costs time itself, so the figures are for
proportions, not for the bench's table.
"""
import re,sys,collections
ts_re=re.compile(r'^(\d{4}-\d\d-\d\dT(\d\d):(\d\d):(\d\d\.\d+))Z')
def t(line):
    m=ts_re.match(line); 
    if not m: return None
    return int(m.group(2))*3600+int(m.group(3))*60+float(m.group(4))
calls=[]; cur=None; skip=False
for line in open(sys.argv[1],errors='replace'):
    if 'watch and take over at' in line: skip=True
    if 'call started' in line:
        m=re.search(r'tool="?(\w+)',line); cur={'tool':m.group(1),'A':t(line),'B':None,'C':None,'load':None,'n':0}
        continue
    if cur is None: continue
    if 'call ended' in line:
        cur['D']=t(line)
        if not skip: calls.append(cur)
        skip=False; cur=None; continue
    if 'direction="send"' in line:
        cur['n']+=1
        if cur['B'] is None and (re.search(r'method="(Page.navigate|Input.insertText|Input.dispatchKeyEvent|Page.navigateToHistoryEntry)"',line) or ('Input.dispatchMouseEvent' in line and 'mousePressed' in line)):
            cur['B']=t(line)
        elif cur['B'] is not None and cur['C'] is None and 'Runtime.evaluate' in line and (('__conch' in line and '__conchSettle' not in line) or "Conch's page reader" in line):
            cur['C']=t(line)
    if 'loadEventFired' in line and cur['B'] is not None and cur['load'] is None:
        cur['load']=t(line)
agg=collections.defaultdict(lambda:[0,0,0,0,0])
ld=collections.defaultdict(lambda:[0,0,0])
for c in calls:
    A,D=c['A'],c['D']; B=c['B'] or A; C=c['C'] or D
    a=agg[c['tool']]; a[0]+=1; a[1]+=B-A; a[2]+=C-B; a[3]+=D-C; a[4]+=D-A
    if c['load'] and c['load']<=C:
        l=ld[c['tool']]; l[0]+=1; l[1]+=c['load']-B; l[2]+=C-c['load']
for k,l in ld.items(): print(f"  with a load: {k:14} n={l[0]} act->load {l[1]:.2f}s load->read {l[2]:.2f}s")
tot=[0,0,0,0]
print(f"{'tool':16} {'n':>3} {'pre':>7} {'act+wait':>9} {'read':>7} {'total':>7}  (seconds)")
for k,a in sorted(agg.items(), key=lambda x:-x[1][4]):
    print(f"{k:16} {a[0]:3} {a[1]:7.2f} {a[2]:9.2f} {a[3]:7.2f} {a[4]:7.2f}")
    for i in range(4): tot[i]+=a[i+1]
print(f"{'all':16} {'':3} {tot[0]:7.2f} {tot[1]:9.2f} {tot[2]:7.2f} {tot[3]:7.2f}")
