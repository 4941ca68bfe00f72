import csv,sys
rows=list(csv.reader(open(sys.argv[1], errors="replace")))
for i,r in enumerate(rows):
    if "Kernel Name" in r: h=r; data=rows[i+2:]; break
else: print("no raw"); sys.exit()
def num(x):
    try: return float(x.replace(',',''))
    except: return None
for d in data:
    if len(d)!=len(h): continue
    kn=d[h.index("Kernel Name")][:48]
    st=sorted(((num(d[j]),h[j]) for j in range(len(h)) if "issue_stalled" in h[j] and "per_issue_active" in h[j] and num(d[j]) is not None), reverse=True)[:6]
    ex=[(h[j],d[j]) for j in range(len(h)) if h[j] in ("gpu__time_duration.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","smsp__issue_active.avg.pct_of_peak_sustained_active","smsp__inst_executed.sum","sm__warps_active.avg.pct_of_peak_sustained_active")]
    print(kn, " ".join("%s=%s"%(a.split('.')[0].split('__')[1],b) for a,b in ex))
    print("   ", "; ".join("%s=%.2f" % (n.split("stalled_")[1].split("_per")[0], v) for v,n in st))
