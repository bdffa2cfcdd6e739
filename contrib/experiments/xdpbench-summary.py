# Summarises xdpbench.sh logs: python3 xdpbench-summary.py LOG_A LOG_B (prints A, B, A+B).
import re,sys,statistics as st
def kv(s): return dict(re.findall(r'(\w+)=([^\s|]+)',s))
for logs in (sys.argv[1:2], sys.argv[2:3], sys.argv[1:3]):
    rows={}; lat={}
    for lg in logs:
        for line in open(lg):
            line=line.strip()
            if 'cfg=lat' in line:
                m=re.search(r'cfg=(\S+).*rtt_us_median=([\d.]+)',line); lat.setdefault(m.group(1),[]).append(float(m.group(2))); continue
            if 'role=ping' in line:
                m=re.search(r'rtt_us_median=([\d.]+)',line); lat.setdefault('AF_PACKET V2 lat2',[]).append(float(m.group(1))); continue
            if '|' not in line: continue
            parts=line.split('|')
            if len(parts)<3: continue
            h,t,r=kv(parts[0]),kv(parts[1]),kv(parts[2])
            if 'cfg' in h: name=h['cfg']+' ['+re.search(r'attach="\s*(\S+)',parts[0]).group(1)+']'
            else: name='ethbench '+t['mode']
            fr=int(r['frames']); secs=float(r['secs']); by=int(r['bytes'])
            tf=int(t['frames'])
            rows.setdefault(name,[]).append((fr/secs, by/secs/1e6, float(t["cpu"]), float(r["cpu"]), float(h["sysbusy"]), tf-fr, tf, (float(t["cpu"])*float(t["secs"])+float(r["cpu"])*secs)/100/fr*1e6))
    print('logs',logs)
    print('| config | rx frames/s | rx MB/s | tx CPU% | rx CPU% | sys busy% | CPU us/frame | lost per run (total %) | runs |')
    print('|---|---|---|---|---|---|---|---|---|')
    for k,v in rows.items():
        med=lambda i: st.median([x[i] for x in v])
        lost=', '.join(str(x[5]) for x in v); tot=100*sum(x[5] for x in v)/sum(x[6] for x in v)
        print(f'| {k} | {med(0)/1e3:.0f}k | {med(1):.0f} | {med(2):.0f} | {med(3):.0f} | {med(4):.0f} | {med(7):.2f} | {lost} ({tot:.2f} %) | {len(v)} ({", ".join(f"{x[0]/1e3:.0f}k" for x in v)}) |')
    for k,v in lat.items(): print(f'lat {k}: median {st.median(v):.1f} us  runs {v}')
    print()
