package rig;

import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import com.netflix.discovery.CacheRefreshedEvent;
import com.netflix.discovery.EurekaClient;
import org.springframework.cache.Cache;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.context.ApplicationContext;

/**
 * Optional instrumentation (caller.probe-ms > 0), read-only:
 *  - "fetch": every CacheRefreshedEvent of the Eureka client (one per successful registry fetch),
 *    with the UP svc instance ids the client now holds;
 *  - "lb": every change of the LoadBalancer cache entry for the service (a new list object = a
 *    reload after expiry; "EXPIRED" when the entry is absent/expired), polled every probe-ms without
 *    triggering a load.
 * Lines: epoch_ms,kind,ids(space separated)
 */
final class Probe {
    private Probe() {}

    static void start(ApplicationContext ctx, String serviceId, long periodMs, String file) throws IOException {
        PrintWriter w = new PrintWriter(new FileWriter(file, true), true);
        EurekaClient eureka = ctx.getBean(EurekaClient.class);
        eureka.registerEventListener(ev -> {
            if (ev instanceof CacheRefreshedEvent) {
                String ids = eureka.getInstancesByVipAddress(serviceId, false).stream()
                        .map(i -> i.getInstanceId()).sorted().collect(Collectors.joining(" "));
                synchronized (w) {
                    w.println(System.currentTimeMillis() + ",fetch," + ids);
                }
            }
        });
        LoadBalancerCacheManager cm = ctx.getBean(LoadBalancerCacheManager.class);
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rig-probe");
            t.setDaemon(true);
            return t;
        });
        final Object[] last = new Object[] {"init"};
        s.scheduleAtFixedRate(() -> {
            Cache c = cm.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME);
            Object v = null;
            if (c != null) {
                Cache.ValueWrapper vw = c.get(serviceId);
                v = vw == null ? null : vw.get();
            }
            if (v != last[0]) {
                last[0] = v;
                String ids;
                if (v == null) {
                    ids = "EXPIRED";
                } else if (v instanceof List<?> l) {
                    ids = l.stream().map(o -> o instanceof ServiceInstance si ? si.getInstanceId() : String.valueOf(o))
                            .sorted().collect(Collectors.joining(" "));
                } else {
                    ids = v.getClass().getName();
                }
                synchronized (w) {
                    w.println(System.currentTimeMillis() + ",lb," + ids);
                }
            }
        }, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }
}
